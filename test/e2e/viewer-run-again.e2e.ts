import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { chromiumDescribe, launchChromium, loggedInPage } from '../support/chromium';
import { startBody, waitForBatch } from '../support/evals';
import { ChildServer, CLI, INIT_KEY, startChild, tempDir, TEST_CONSENT_CONFIG } from '../support/servers';

/**
 * "Run a case again" for a case that has run on the server and in local mode: the API leaves the
 * local variant out (or refuses it by name), and the viewer offers the case's variants, the local
 * one shown but not offered (Debian's chromium, as in viewer.e2e.ts).
 */
const describeWithChromium = chromiumDescribe('the run-again viewer tests');

const RUN = 'echo hello > out.txt';
const SUITE = `suite:
  id: again
  prompt: "Write {{word}} into out.txt"
cases:
  - id: say-it-again
    variables: { word: hello }
    verify: grep -q hello out.txt
variants:
  - harness: command
    model: none
    sandbox: local
    profile:
      name: on my machine
      run: '${RUN}'
trials: 1
`;

describeWithChromium('running a case again', () => {
  let server: ChildServer;
  let browser: Browser | undefined;
  let page: Page;
  let caseVariants: any[];

  beforeAll(async () => {
    if (viewerDirectory() === null) throw new Error('dist/viewer is missing: run "npm run build" first (npm test does).');
    server = await startChild({ ASSAY_DATA_DIR: tempDir(), ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    const body = startBody({
      suite: { id: 'again', prompt: 'Write {{word}} into out.txt' },
      cases: [{ id: 'say-it-again', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' }],
      variants: [{ harness: 'command', model: 'none', profile: { name: 'on the server', run: RUN } }],
    });
    await waitForBatch(server.client, (await server.client.call('evals.batches.start', body)).body.id);
    const file = path.join(tempDir('assay-suite-'), 'again.yaml');
    fs.writeFileSync(file, SUITE);
    const local = spawnSync(process.execPath, [CLI, 'eval', file, '--url', server.url, '--key', INIT_KEY], {
      encoding: 'utf8',
      // The consent to run unsandboxed where bubblewrap is missing (the local machine's default sandbox is then the process driver).
      env: { PATH: process.env.PATH ?? '', HOME: tempDir('assay-home-'), ASSAY_CONFIG: TEST_CONSENT_CONFIG },
      timeout: 120000,
    });
    expect([local.status, local.stderr]).toEqual([0, expect.any(String)]);
    caseVariants = (await server.client.call('evals.cases.get', { id: 'say-it-again' })).body.variants.map((v: any) => v.variant);
    expect(caseVariants.map((v) => v.sandbox ?? null).sort()).toEqual(['local', null].sort());
    browser = await launchChromium();
    page = await loggedInPage(browser, server.url);
  }, 180000);

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  it('over the API: the local variant is left out, or refused by its name when asked for', async () => {
    const localId = caseVariants.find((v) => v.sandbox === 'local').id;
    const refused = await server.client.call('evals.cases.run', { id: 'say-it-again', variants: [localId] });
    expect([refused.status, refused.body.message]).toEqual([
      400,
      "command/none (on my machine) runs on its caller's machine (sandbox local): run it again with assay eval --local.",
    ]);
    const started = await server.client.call('evals.cases.run', { id: 'say-it-again' });
    expect(started.status).toBe(200);
    const batch = await waitForBatch(server.client, started.body.id);
    expect(batch.runs.map((run: any) => run.variant.profile.name)).toEqual(['on the server']);
  });

  it("in the viewer: offers the case's variants, the local one shown but not offered, and starts the batch", async () => {
    await page.getByText('Run a case again').click();
    await page.getByLabel('Case', { exact: true }).selectOption('say-it-again');
    const onServer = page.getByRole('checkbox', { name: 'command/none (on the server)' });
    const local = page.getByRole('checkbox', { name: /command\/none \(on my machine\) \(runs on its own machine/ });
    expect([await onServer.isChecked(), await onServer.isDisabled()]).toEqual([true, false]);
    expect([await local.isChecked(), await local.isDisabled()]).toEqual([false, true]);
    await page.getByRole('button', { name: 'Start a batch' }).click();
    await page.waitForURL(/#\/batches\/bat_/);
    const batchId = decodeURIComponent(page.url().split('#/batches/')[1]);
    const batch = await waitForBatch(server.client, batchId);
    expect(batch.runs.map((run: any) => run.variant.profile.name)).toEqual(['on the server']);
  });
});
