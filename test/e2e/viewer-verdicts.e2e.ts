import type { Browser, Page } from 'playwright-core';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { chromiumDescribe, launchChromium, loggedInPage } from '../support/chromium';
import { startBody, waitForBatch } from '../support/evals';
import { ChildServer, INIT_KEY, startChild, tempDir } from '../support/servers';

// Evaluated in the browser.
declare const document: any;
declare const window: any;

/** Void is never green, and a failed trial says why: the viewer in a real browser (Debian's chromium, as in viewer.e2e.ts). */
const describeWithChromium = chromiumDescribe("the viewer's verdict tests");

describeWithChromium('void and failed trials in the viewer', () => {
  let server: ChildServer;
  let browser: Browser | undefined;
  let page: Page;
  let voided: any;
  let failed: any;
  let other: any;

  beforeAll(async () => {
    if (viewerDirectory() === null) throw new Error('dist/viewer is missing: run "npm run build" first (npm test does).');
    server = await startChild({ ASSAY_DATA_DIR: tempDir(), ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    // A sandbox kind this server has no driver for: every trial is void.
    const allVoid = startBody({ variants: [{ harness: 'command', model: 'none', sandbox: 'sandbox_kind_4', profile: { run: 'echo hello > out.txt' } }] });
    const failing = startBody({
      cases: [{ id: 'wrong-sum', variables: { word: 'hello' }, verify: 'echo "checking the sum"; echo "expected 3, got 2"; exit 1' }],
    });
    const named = startBody({ suite: { id: 'other-suite', name: 'Other suite', prompt: 'Write {{word}} into out.txt' } });
    other = await waitForBatch(server.client, (await server.client.call('evals.batches.start', named)).body.id);
    voided = await waitForBatch(server.client, (await server.client.call('evals.batches.start', allVoid)).body.id);
    failed = await waitForBatch(server.client, (await server.client.call('evals.batches.start', failing)).body.id);
    expect(voided.runs[0].trials[0].status).toBe('void');
    expect(failed.runs[0].trials[0].status).toBe('failed');
    browser = await launchChromium();
    page = await loggedInPage(browser, server.url);
  }, 120000);

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  it('shows an all-void batch as void on the list and in its grid, never with a pass colour', async () => {
    const row = page.locator('#batches-table tbody tr', { has: page.getByRole('link', { name: voided.id }) });
    await row.waitFor();
    expect(await row.getAttribute('class')).toBe('all-void');
    expect((await row.locator('.counts').textContent())!.replace(/\s+/g, ' ').trim()).toBe('0 ✓ 0 ✗ 1 ⊘ nothing measured');
    const other = page.locator('#batches-table tbody tr', { has: page.getByRole('link', { name: failed.id }) });
    expect(await other.getAttribute('class')).toBeNull();
    expect((await other.locator('.counts').textContent())!.replace(/\s+/g, ' ').trim()).toBe('0 ✓ 1 ✗ 0 ⊘');

    await page.goto(`${server.url}/#/batches/${voided.id}`);
    const cell = page.locator('#batch-grid td.cell').first();
    await cell.waitFor();
    expect(await cell.getAttribute('class')).toBe('cell void');
    expect(await cell.locator('.rate').textContent()).toBe('void');
    expect(await cell.evaluate((element: any) => element.style.background)).toBe('');
  });

  it("names each batch's suite, the id beside it, and filters the list by suite", async () => {
    await page.goto(`${server.url}/#/batches`);
    const row = page.locator('#batches-table tbody tr', { has: page.getByRole('link', { name: other.id }) });
    await row.waitFor();
    expect([await row.locator('th a').textContent(), await row.locator('th .id').textContent()]).toEqual(['Other suite', 'other-suite']);
    await page.getByLabel('Suite', { exact: true }).selectOption('other-suite');
    await page.locator('#batches-table tbody tr').first().waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#batches-table tbody tr').length === 1);
    expect(await page.locator('#batches-table tbody tr a.id').allTextContents()).toEqual([other.id]);
    await page.goto(`${server.url}/#/batches/${other.id}`);
    await page.locator('#batch-grid').waitFor();
    expect(await page.locator('main h1').textContent()).toBe('Other suite');
    expect(await page.locator('main header.page-title .sub').textContent()).toBe(`batch ${other.id} · suite other-suite`);
  });

  it('is usable at 390 px: no page scrolls sideways, wide tables scroll inside themselves', async () => {
    const phone = await (await browser!.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await phone.goto(`${server.url}/`);
    await phone.getByLabel('API key').fill(INIT_KEY);
    await phone.keyboard.press('Enter');
    await phone.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
    const run = failed.runs[0];
    for (const [hash, ready] of [
      ['#/batches', '#batches-table'],
      [`#/batches/${failed.id}`, '#batch-grid'],
      [`#/runs/${run.id}`, 'table.list'],
      [`#/runs/${run.id}/trials/${run.trials[0].id}`, '#trajectory'],
    ]) {
      await phone.goto(`${server.url}/${hash}`);
      await phone.locator(ready).first().waitFor();
      const widths = await phone.evaluate(() => ({ page: document.documentElement.scrollWidth, view: window.innerWidth }));
      expect([hash, widths.page]).toEqual([hash, widths.view]);
    }
    await phone.context().close();
  });

  it('keeps the run page\'s "Why void" for void trials and says why a trial failed', async () => {
    await page.goto(`${server.url}/#/runs/${voided.runs[0].id}`);
    const header = page.locator('table thead th');
    await header.first().waitFor();
    const columns = await header.allTextContents();
    const cells = await page.locator('table tbody tr').first().locator('td').allTextContents();
    expect(cells[columns.indexOf('Why void') - 1]).toContain('sandbox_kind_4 has no driver configured');
    expect(cells[columns.indexOf('Why failed') - 1]).toBe('');

    await page.goto(`${server.url}/#/runs/${failed.runs[0].id}/trials/${failed.runs[0].trials[0].id}`);
    const why = page.locator('#why-failed');
    await why.waitFor();
    expect((await why.textContent())!.replace(/\s+/g, ' ')).toContain('exited 1, ending:');
    expect(await why.getByLabel("The end of verify's output").textContent()).toBe('checking the sum\nexpected 3, got 2');
  });
});
