import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { INIT_KEY, tempDir } from './servers';

/**
 * Debian's chromium through playwright-core, as the viewer's browser tests drive it: `describe`
 * when it is installed, else `describe.skip` with the reason printed once per test file.
 */
export const CHROMIUM = '/usr/bin/chromium';

export function chromiumDescribe(what: string): jest.Describe {
  const absent = fs.existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (.ci/run installs Debian's chromium package)`;
  if (absent !== null) process.stderr.write(`Skipping ${what} of ${path.basename(expect.getState().testPath ?? 'this file')}: ${absent}\n`);
  return absent === null ? describe : describe.skip;
}

/** A headless chromium with a temporary directory of the test file's own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], env: { ...process.env, TMPDIR: tempDir('assay-chromium-') } });
}

/** A new page of its own context, logged in with the initial key and showing the batches. */
export async function loggedInPage(browser: Browser, serverUrl: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  await page.goto(`${serverUrl}/`);
  await page.getByLabel('API key').fill(INIT_KEY);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
  return page;
}
