import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { startBody, waitForBatch } from '../support/evals';
import { ChildServer, CLI, INIT_KEY, startChild, tempDir } from '../support/servers';

/**
 * `assay export BATCH --html FILE`, the real CLI as a child process, and the file it wrote opened
 * from disk in a real browser (Debian's chromium) with the network off: the same counts as the
 * live page, and a trial's conversation and diff.
 */
const CHROMIUM = '/usr/bin/chromium';
const chromiumAbsent = fs.existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (.ci/run installs Debian's chromium package)`;
if (chromiumAbsent !== null) process.stderr.write(`Skipping the export tests: ${chromiumAbsent}\n`);
const describeWithChromium: jest.Describe = chromiumAbsent === null ? describe : describe.skip;

describeWithChromium('assay export --html', () => {
  let server: ChildServer;
  let browser: Browser | undefined;
  let batch: any;
  let file: string;

  beforeAll(async () => {
    if (viewerDirectory() === null) throw new Error('dist/viewer is missing: run "npm run build" first (npm test does).');
    server = await startChild({ ASSAY_DATA_DIR: tempDir(), ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    const body = startBody({
      cases: [
        { id: 'export-pass', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' },
        { id: 'export-fail', variables: { word: 'bye' }, verify: 'grep -q nothing-here out.txt' },
      ],
      trials: 2,
    });
    batch = await waitForBatch(server.client, (await server.client.call('evals.batches.start', body)).body.id);
    file = path.join(tempDir('assay-export-'), 'batch.html');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], env: { ...process.env, TMPDIR: tempDir('assay-chromium-') } });
  }, 120000);

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ASSAY_URL: server.url, ASSAY_API_KEY: INIT_KEY } });

  /** The batch page's counts and grid as a page shows them. */
  async function shown(page: Page): Promise<{ facts: string; cells: string[] }> {
    const grid = page.locator('#batch-grid');
    await grid.waitFor();
    const facts = (await page.locator('main dl').first().textContent())!.replace(/\s+/g, ' ');
    const cells = (await grid.locator('td.cell .detail').allTextContents()).map((text) => text.trim());
    return { facts: facts.replace(/Took.*$/, ''), cells };
  }

  it('writes one file that opens from disk with the network off and shows what the live page shows', async () => {
    const written = cli('export', batch.id, '--html', file);
    expect([written.status, written.stderr]).toEqual([0, expect.stringContaining('4 trials read')]);
    expect(written.stdout.trim()).toBe(file);
    const html = fs.readFileSync(file, 'utf8');
    expect(html).not.toContain(INIT_KEY);

    const live = await (await browser!.newContext()).newPage();
    await live.goto(`${server.url}/`);
    await live.getByLabel('API key').fill(INIT_KEY);
    await live.keyboard.press('Enter');
    await live.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
    await live.goto(`${server.url}/#/batches/${batch.id}`);
    const livePage = await shown(live);

    const context = await browser!.newContext({ offline: true });
    const requested: string[] = [];
    context.on('request', (request) => {
      if (!request.url().startsWith('file:') && !request.url().startsWith('data:')) requested.push(request.url());
    });
    const offline = await context.newPage();
    await offline.goto(`${pathToFileURL(file).href}#/batches/${batch.id}`);
    const exportedPage = await shown(offline);
    expect(exportedPage).toEqual(livePage);
    expect(exportedPage.cells).toEqual(expect.arrayContaining(['2/2 passed', '0/2 passed']));
    expect(await offline.locator('#exported').textContent()).toContain(`Exported from ${server.url}`);

    // A trial: its conversation and its diff come from the file too.
    const run = batch.runs.find((r: any) => r.case.id === 'export-pass');
    await offline.goto(`${pathToFileURL(file).href}#/runs/${run.id}/trials/${run.trials[0].id}`);
    await offline.locator('#trajectory').waitFor();
    await offline.locator('#diff').waitFor();
    expect(await offline.locator('#diff details.diff-file summary code').allTextContents()).toEqual(['out.txt', 'prompt.txt']);
    expect(requested).toEqual([]);
  });

  it('refuses to replace a file unless --force, and says what is wrong with a batch it cannot read', async () => {
    fs.writeFileSync(file, 'mine');
    const refused = cli('export', batch.id, '--html', file);
    expect([refused.status, refused.stderr]).toEqual([2, expect.stringContaining('exists: give another file, or --force')]);
    expect(fs.readFileSync(file, 'utf8')).toBe('mine');
    expect(cli('export', batch.id, '--html', file, '--force').status).toBe(0);
    const badUrl = spawnSync(process.execPath, [CLI, 'export', batch.id, '--html', path.join(path.dirname(file), 'url.html'), '--url', 'ftp://x'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ASSAY_API_KEY: INIT_KEY },
    });
    expect([badUrl.status, badUrl.stderr]).toEqual([2, expect.stringContaining('must be an http(s) URL')]);
    const unknown = cli('export', 'bat_nothing', '--html', path.join(path.dirname(file), 'other.html'));
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('404');
  });
});
