import * as fs from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { ChildServer, INIT_KEY, startChild, tempDir } from '../support/servers';

/** The viewer's login in a real browser (Debian's chromium, as in viewer.e2e.ts): a key kept per tab, or remembered on the device. */
const CHROMIUM = '/usr/bin/chromium';
const chromiumAbsent = fs.existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (.ci/run installs Debian's chromium package)`;
if (chromiumAbsent !== null) process.stderr.write(`Skipping the viewer's login tests: ${chromiumAbsent}\n`);
const describeWithChromium: jest.Describe = chromiumAbsent === null ? describe : describe.skip;

describeWithChromium("the viewer's login", () => {
  let server: ChildServer;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (viewerDirectory() === null) throw new Error('dist/viewer is missing: run "npm run build" first (npm test does).');
    server = await startChild({ ASSAY_DATA_DIR: tempDir(), ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], env: { ...process.env, TMPDIR: tempDir('assay-chromium-') } });
  }, 120000);

  afterAll(async () => {
    await browser?.close();
    await server.stop();
  });

  async function logIn(context: BrowserContext, remember: boolean) {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.getByLabel('API key').fill(INIT_KEY);
    if (remember) await page.getByLabel(/Remember on this device/).check();
    await page.getByRole('button', { name: 'Open the viewer' }).click();
    await page.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
    return page;
  }

  /** What a new tab of the context shows first: the batches (a key it found) or the login. */
  async function newTabShows(context: BrowserContext): Promise<'batches' | 'login'> {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    const batches = page.getByRole('heading', { level: 1, name: 'Batches' });
    const login = page.getByLabel('API key');
    await Promise.race([batches.waitFor(), login.waitFor()]);
    const shown = (await batches.count()) > 0 ? 'batches' : 'login';
    await page.close();
    return shown;
  }

  it('keeps the key for its tab alone unless remembered; remembered, a new tab opens the viewer until "Forget key"', async () => {
    const once = await browser!.newContext();
    await logIn(once, false);
    expect(await newTabShows(once)).toBe('login');
    await once.close();

    const device = await browser!.newContext();
    const page = await logIn(device, true);
    expect(await newTabShows(device)).toBe('batches');
    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await newTabShows(device)).toBe('login');
    await device.close();
  });

  it('loads with no 404 (the icon is served) and says which permissions it needs, words apart', async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    const missing: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 404) missing.push(response.url());
    });
    await page.goto(`${server.url}/`);
    await page.getByLabel('API key').waitFor();
    await page.waitForLoadState('networkidle');
    expect(missing).toEqual([]);
    const icon = await page.request.get(`${server.url}/favicon.svg`);
    expect([icon.status(), icon.headers()['content-type']]).toEqual([200, expect.stringContaining('image/svg+xml')]);
    expect((await page.locator('#key-help').textContent())!.replace(/\s+/g, ' ')).toContain('with evals:read and prompts:read.');
    await context.close();
  });
});
