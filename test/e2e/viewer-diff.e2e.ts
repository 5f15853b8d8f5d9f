import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { chromiumDescribe, launchChromium, loggedInPage } from '../support/chromium';
import { startBody, waitForBatch } from '../support/evals';
import { ChildServer, INIT_KEY, ROOT, startChild, tempDir } from '../support/servers';

/**
 * The agent's change on the trial page in a real browser (Debian's chromium, as in
 * viewer.e2e.ts): a real trial that edited two files and added one; the diff by file with line
 * numbers, and an artifact opened.
 */
const describeWithChromium = chromiumDescribe("the viewer's diff tests");

const AGENT = ["printf 'alpha\\nBETA\\ngamma\\n' > notes.txt", "printf 'x = 2\\n' > src/app.py", "printf 'brand new\\n' > src/added.txt"].join('\n');

describeWithChromium("the trial page's diff and artifacts", () => {
  let server: ChildServer;
  let browser: Browser | undefined;
  let page: Page;
  let trialPage: string;
  let runPage: string;

  beforeAll(async () => {
    if (viewerDirectory() === null) throw new Error('dist/viewer is missing: run "npm run build" first (npm test does).');
    server = await startChild({ ASSAY_DATA_DIR: tempDir(), ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    const source = { kind: 'files', files: { 'notes.txt': 'alpha\nbeta\ngamma\n', 'src/app.py': 'x = 1\n' } };
    const started = await server.client.call(
      'evals.batches.start',
      startBody({
        cases: [{ id: 'edit-two-add-one', variables: { word: 'hello' }, verify: 'true', source }],
        variants: [{ harness: 'command', model: 'none', profile: { run: AGENT } }],
      }),
    );
    expect(started.status).toBe(200);
    const run = (await waitForBatch(server.client, started.body.id)).runs[0];
    expect(run.trials[0].status).toBe('passed');
    trialPage = `${server.url}/#/runs/${run.id}/trials/${run.trials[0].id}`;
    runPage = `${server.url}/#/runs/${run.id}`;
    browser = await launchChromium();
    page = await loggedInPage(browser, server.url);
  }, 180000);

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  it('lists the changed files, each collapsed; opened, its hunks with old and new line numbers', async () => {
    await page.goto(trialPage);
    const diff = page.locator('#diff');
    await diff.waitFor();
    expect(await diff.locator('p').first().textContent()).toBe('3 files changed.');
    const files = diff.locator('details.diff-file');
    expect(await files.locator('summary code').allTextContents()).toEqual(['notes.txt', 'src/added.txt', 'src/app.py']);
    expect(await files.nth(1).locator('summary .change').textContent()).toBe('added');
    expect(await files.nth(0).evaluate((element: any) => element.open as boolean)).toBe(false);

    await files.nth(0).locator('summary').click();
    const rows = files.nth(0).locator('table.diff tbody tr');
    const cells = await rows.evaluateAll((trs: any[]) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td: any) => td.textContent as string)));
    expect(cells).toEqual([
      ['', '', '@@ -1,3 +1,3 @@'],
      ['1', '1', ' alpha'],
      ['2', '', '-beta'],
      ['', '2', '+BETA'],
      ['3', '3', ' gamma'],
    ]);
    fs.mkdirSync(path.join(ROOT, 'test', 'artifacts'), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, 'test', 'artifacts', 'trial-diff.png'), fullPage: true });
  });

  it('shows the profile as written: a multi-line command as its own lines', async () => {
    await page.goto(runPage);
    const profile = page.getByLabel('Profile', { exact: true });
    await profile.waitFor();
    expect(await profile.textContent()).toBe(
      ['run: |', "  printf 'alpha\\nBETA\\ngamma\\n' > notes.txt", "  printf 'x = 2\\n' > src/app.py", "  printf 'brand new\\n' > src/added.txt"].join('\n'),
    );
  });

  it('opens a text artifact in the page', async () => {
    await page.goto('about:blank');
    await page.goto(trialPage);
    const artifacts = page.locator('#artifacts');
    await artifacts.waitFor();
    await artifacts.getByRole('button', { name: 'src/added.txt' }).click();
    const content = page.getByLabel('Content of src/added.txt');
    await content.waitFor();
    expect(await content.textContent()).toBe('brand new\n');
  });
});
