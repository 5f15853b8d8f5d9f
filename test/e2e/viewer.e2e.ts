import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { FakeProvider, startFakeProvider } from '../support/fake-provider';
import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, ROOT, startInProcess, tempDir } from '../support/servers';
import { ANALYTICS_SIDES, makeAnalyticsHistory } from '../support/analytics-history';

/**
 * The web viewer in a real browser: Debian's chromium, headless, driven by playwright-core,
 * against a real server holding data the test makes through the API. Screenshots go to
 * test/artifacts/ (ignored by git); the README's two come from here too.
 */
// The functions given to page.evaluate run in the browser. The project compiles without the DOM
// library (it is server code), so the few browser names they use are declared for this file only.
declare const document: any;
declare const window: any;
declare const sessionStorage: any;
declare const localStorage: any;
declare function getComputedStyle(element: unknown): any;

const CHROMIUM = '/usr/bin/chromium';
const chromiumAbsent = fs.existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (.ci/run installs Debian's chromium package)`;
if (chromiumAbsent !== null) process.stderr.write(`Skipping the viewer's browser tests: ${chromiumAbsent}\n`);
const describeWithChromium: jest.Describe = chromiumAbsent === null ? describe : describe.skip;

const ARTIFACTS = path.join(ROOT, 'test', 'artifacts');
/** The README's screenshots are taken again from this real run with ASSAY_UPDATE_SCREENSHOTS=1; otherwise they land with the others, in test/artifacts. */
const README_IMAGES = process.env.ASSAY_UPDATE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs', 'images') : ARTIFACTS;
const KEY_NAME = 'initial key (ASSAY_INIT_API_KEY)';

/** An agent that writes `word` into out.txt and says so, one line per turn. */
const agent = (model: string, word: string) => ({
  harness: 'command',
  model,
  profile: { run: `cat > /dev/null; echo ${word} >> out.txt; echo "I wrote ${word} into out.txt (turn \${ASSAY_TURN:-1})"` },
});

describeWithChromium('the web viewer in a real browser', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let finished: any;
  let conversationTrial: { runId: string; trialId: string };

  beforeAll(async () => {
    if (viewerDirectory() === null) throw new Error('dist/viewer is missing: run "npm run build" first (npm test does).');
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    finished = await makeFinishedBatch(api);
    const conversation = finished.runs.find((run: any) => run.case.id === 'talk-it-through' && run.variant.model === 'fast');
    conversationTrial = { runId: conversation.id, trialId: conversation.trials[0].id };
    await makeSecondCaseVersion(api);
    await makePrompt(api);
    // The browser's own temporary files go to a directory the test file removes.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], env: { ...process.env, TMPDIR: tempDir('assay-chromium-') } });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  }, 180000);

  afterAll(async () => {
    await browser?.close();
    await server.close();
  });

  const open = async (hash: string) => {
    await page.goto(`${server.url}/${hash}`);
    await page.locator('main h1').first().waitFor();
  };
  const main = () => page.locator('main');
  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  it('asks for a key, refuses a wrong one, keeps the right one in sessionStorage and forgets it on request', async () => {
    await page.goto(`${server.url}/`);
    const field = page.getByLabel('API key');
    await field.waitFor();
    expect(await field.getAttribute('type')).toBe('password');
    await field.fill('assay_not_a_key_of_this_server_000000');
    await page.getByRole('button', { name: 'Open the viewer' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('does not know this key (401)');
    await shot('login-refused');

    await field.fill(INIT_KEY);
    await page.getByRole('button', { name: 'Open the viewer' }).click();
    await page.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
    expect(await page.locator('header.top').textContent()).toContain('Organization acme');
    expect(await page.evaluate(() => sessionStorage.getItem('assay.apiKey'))).toBe(INIT_KEY);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);

    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('assay.apiKey'))).toBeNull();
    expect(await page.locator('main').textContent()).toContain('The key was forgotten');

    const again = page.getByLabel('API key');
    await again.fill(INIT_KEY);
    await again.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
  });

  it('lists the batches with their status, counts, pass rate and trigger, and filters them', async () => {
    await open('#/batches');
    const row = page.locator('#batches-table tbody tr', { hasText: finished.id });
    await row.waitFor();
    const cells = await row.locator('th, td').allTextContents();
    // Suite, batch, status, started, took, cases, runs, passed · failed · void, pass rate, trigger.
    expect(cells[0]).toBe(finished.runs[0].suite.name);
    expect(cells[1]).toBe(finished.id);
    expect(cells[2]).toContain('finished');
    expect(cells.slice(5, 10)).toEqual(['3', '6', '8 ✓ 4 ✗ 0 ⊘', '67%', 'api']);
    await page.getByLabel('Status', { exact: true }).selectOption('running');
    await page.locator('main .count', { hasText: /^0 shown of 2 loaded · 2 in all/ }).waitFor();
    expect(await page.locator('#batches-table tbody tr').count()).toBe(0);
    await page.getByLabel('Status', { exact: true }).selectOption('finished');
    await page.locator('main .count', { hasText: /^2 shown of 2 loaded/ }).waitFor();
    expect(await page.locator('#batches-table tbody tr').count()).toBe(2);
    await shot('batches');
  });

  it('shows a batch as a grid of cases × variants with the pass rate as text, and saves the README screenshot', async () => {
    await open(`#/batches/${finished.id}`);
    await page.locator('#batch-grid').waitFor();
    expect(await page.locator('#batch-status').textContent()).toContain('finished');
    const headers = await page.locator('#batch-grid thead th').allTextContents();
    expect(headers).toEqual(['Case', 'command/fast', 'command/careful']);
    const grid = await page
      .locator('#batch-grid tbody tr')
      .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].map((cell) => (cell.querySelector('.rate') ?? cell).textContent!.trim())));
    expect(grid).toEqual([
      ['say-hello', '100%', '0%'],
      ['say-goodbye', '0%', '100%'],
      ['talk-it-through', '100%', '100%'],
    ]);
    expect(await page.locator('#batch-grid tbody tr').first().locator('td').first().textContent()).toContain('2/2 passed');
    // The colour says the same as the text: green for 100%, red for 0%.
    const colours = await page
      .locator('#batch-grid tbody tr')
      .first()
      .locator('td')
      .evaluateAll((cells) => cells.map((c) => getComputedStyle(c).backgroundColor));
    expect(colours[0]).not.toBe(colours[1]);
    expect(await main().textContent()).toContain('8 of 12 scored (67%)');
    await page.screenshot({ path: path.join(README_IMAGES, 'viewer-batch.png') });
    await shot('batch');
  });

  it('shows a run: its distribution with a Wilson interval, its trials, costs and set-up', async () => {
    const run = finished.runs.find((r: any) => r.case.id === 'say-hello' && r.variant.model === 'careful');
    await open(`#/runs/${run.id}`);
    expect(await page.locator('main h1').textContent()).toContain('say-hello on command/careful');
    const text = (await main().textContent())!;
    expect(text).toContain('0% (0 of 2 scored)');
    expect(text).toContain('Wilson 95% interval0%–66%');
    expect(text).toContain('Deterministicyes');
    expect(text).toContain('Write hello into out.txt');
    expect(text).toContain('grep -q hello out.txt');
    expect(await page.locator('#trials-table tbody tr').allTextContents()).toEqual([expect.stringContaining('failed'), expect.stringContaining('failed')]);
    await shot('run');
  });

  it('shows a trial: the conversation turn by turn, each command with its output, verify steps and files', async () => {
    await open(`#/runs/${conversationTrial.runId}/trials/${conversationTrial.trialId}`);
    await page.locator('#trajectory').waitFor();
    const messages = await page
      .locator('#trajectory li.message')
      .evaluateAll((items) => items.map((item) => `${item.querySelector('.who')!.textContent} | ${item.querySelector('.text')!.textContent}`));
    expect(messages).toEqual([
      'User, turn 1 | Write hello into out.txt',
      'Agent, turn 1 | I wrote hello into out.txt (turn 1)',
      'User, turn 2 | please add one more line',
      'Agent, turn 2 | I wrote hello into out.txt (turn 2)',
      'User, turn 3 | thanks, that is all',
      'Agent, turn 3 | I wrote hello into out.txt (turn 3)',
    ]);
    const commands = await page.locator('#trajectory li.command summary').allTextContents();
    expect(commands.length).toBeGreaterThanOrEqual(4);
    expect(commands[0]).toContain('exit 0');
    expect(await page.locator('#trajectory li.command').first().locator('pre').textContent()).toContain('I wrote hello into out.txt (turn 1)');
    expect(await page.locator('#trajectory .conversation-end').textContent()).toContain('ended after 3 turns: replies-exhausted');
    expect(await page.locator('#verify-steps tbody tr').allTextContents()).toEqual([expect.stringMatching(/test \$\(wc -l < out.txt\) -eq 3.*0.*passed/)]);
    const text = (await main().textContent())!;
    expect(text).toContain('passed');
    expect(text).toContain('No validator ran.');
    expect(text).toContain('out.txt');
    await page.screenshot({ path: path.join(README_IMAGES, 'viewer-trial.png') });
    await shot('trial');
  });

  it('shows a case: pass rate per variant over its versions as a chart and as a table', async () => {
    await open('#/cases/say-hello');
    await page.locator('#case-chart canvas').waitFor();
    expect(await page.locator('#case-chart').getAttribute('aria-label')).toContain('over 2 versions');
    const history = await page.locator('#case-history tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((c) => c.textContent!.trim())));
    expect(history).toEqual([
      ['command/fast', expect.stringMatching(/^100% \(2\/2\)/), expect.stringMatching(/^100% \(1\/1\)/)],
      ['command/careful', expect.stringMatching(/^0% \(0\/2\)/), expect.stringMatching(/^0% \(0\/1\)/)],
    ]);
    expect(await page.locator('#versions tbody tr').allTextContents()).toEqual([expect.stringContaining('verifier'), expect.stringContaining('first version')]);
    await shot('case');
  });

  it('lists the suites and compares a suite’s variants side by side with Wilson intervals', async () => {
    await open('#/suites');
    await page.locator('#suites-table tbody tr').first().waitFor();
    expect(await page.locator('#suites-table tbody tr').allTextContents()).toEqual([expect.stringContaining('greetings')]);
    await page.locator('#suites-table a', { hasText: 'greetings' }).click();
    await page.locator('#suite-variants').waitFor();
    const rows = await page
      .locator('#suite-variants tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 5).map((c) => c.textContent!.trim())));
    // Newest run of each case: say-hello's second version ran one trial per variant.
    expect(rows).toEqual([
      ['command/careful', '3', '4 / 5', '80%', '38%–96%'],
      ['command/fast', '3', '3 / 5', '60%', '23%–88%'],
    ]);
    expect(await page.locator('#suite-cases tbody tr').count()).toBe(3);
    await shot('suite');
  });

  it('shows the prompts, a diff between two versions and which version production served when, promoted by whom', async () => {
    await open('#/prompts');
    await page.locator('#prompts-table tbody tr').first().waitFor();
    const row = await page.locator('#prompts-table tbody tr').allTextContents();
    expect(row).toEqual([expect.stringMatching(/support\/greeting.*v3.*v2/)]);
    await page.locator('#prompts-table a', { hasText: 'support/greeting' }).click();
    await page.locator('#prompt-diff').waitFor();
    expect(await page.locator('#prompt-versions tbody tr').allTextContents()).toEqual([
      expect.stringContaining('first draft'),
      expect.stringMatching(/friendlier.*production/),
      expect.stringMatching(/v3.*latest/),
    ]);
    // v2 → v3 by default.
    expect(await page.locator('main [role=status]').first().textContent()).toBe('v2 → v3: 1 line added, 1 removed.');
    await page.getByLabel('From', { exact: true }).selectOption('1');
    await page.locator('main [role=status]', { hasText: 'v1 → v3' }).waitFor();
    expect(await page.locator('#prompt-diff .line.removed').allTextContents()).toEqual([expect.stringContaining('Hello {{name}}.')]);
    expect(await page.locator('#prompt-diff .line.added').allTextContents()).toEqual([
      expect.stringContaining('Hi {{name}}, welcome back!'),
      expect.stringContaining('Sign-off: Assay'),
    ]);
    const timeline = await page.locator('#channel-timeline tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent!.trim())));
    expect(timeline).toEqual([
      ['v1', expect.stringMatching(/UTC$/), expect.stringMatching(/UTC$/), expect.stringContaining(KEY_NAME), '—'],
      ['v2', expect.stringMatching(/UTC$/), 'now', expect.stringContaining(KEY_NAME), 'v1'],
    ]);
    expect(await page.locator('#prompt-history li').allTextContents()).toEqual([
      expect.stringMatching(/UTC: initial key .* added v1 \(“first draft”\)$/),
      expect.stringMatching(/moved production to v1$/),
      expect.stringMatching(/added v2 \(“friendlier”\)$/),
      expect.stringMatching(/added v3 \(“shorter”\)$/),
      expect.stringMatching(/moved production from v1 to v2$/),
    ]);
    await shot('prompt');
  });

  it('is usable with the keyboard alone: the main links are reachable, focus is visible, Enter follows a link', async () => {
    await open('#/batches');
    await page.locator('#batches-table').waitFor();
    // From the top of the page: the skip link is the first stop.
    await page.evaluate(() => document.querySelector('a.skip').focus());
    const reached: Array<{ text: string; outline: string }> = [];
    for (let i = 0; i < 20; i++) {
      if (i > 0) await page.keyboard.press('Tab');
      reached.push(
        await page.evaluate(() => {
          const el = document.activeElement;
          const style = getComputedStyle(el);
          return { text: (el.textContent ?? '').trim() || el.getAttribute('aria-label') || el.tagName, outline: `${style.outlineStyle} ${style.outlineWidth}` };
        }),
      );
    }
    const texts = reached.map((r) => r.text);
    for (const name of ['Skip to content', 'Assay', 'Batches', 'Suites', 'Analytics', 'Prompts', 'Forget key', finished.id]) expect(texts).toContain(name);
    for (const r of reached.filter((r) => ['Batches', 'Suites', 'Prompts', finished.id].includes(r.text))) expect(r.outline).toBe('solid 3px');

    // Tab to the batch's link and follow it with Enter: the new page's heading takes the focus.
    await page.evaluate(() => document.querySelector('a.skip').focus());
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate(() => document.activeElement?.textContent?.trim())) === finished.id) break;
    }
    await page.keyboard.press('Enter');
    await page.locator('#batch-grid').waitFor();
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    expect(await page.evaluate(() => document.title)).toBe(`${finished.runs[0].suite.name} · Assay`);
  });

  it('shows a suite’s analytics: pass rates with Wilson intervals as a chart and tables, a flaky case, and two batches compared in words', async () => {
    // A server of its own, with a judge (the fake provider) that makes one case flaky on purpose.
    const fake: FakeProvider = await startFakeProvider();
    const config = path.join(tempDir(), 'assay.yaml');
    fs.writeFileSync(
      config,
      [
        'allowUnsandboxed: true',
        'providers:',
        `  grader: { protocol: openai, baseURL: "${fake.url}", apiKeyEnv: VIEWER_JUDGE_KEY }`,
        'judges: { provider: grader, model: judge-model }',
      ].join('\n'),
    );
    process.env.VIEWER_JUDGE_KEY = 'sk-viewer-judge-0123456789';
    const analytics = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: config });
    const own = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const { before, after } = await makeAnalyticsHistory(analytics.client, fake);
      const tab = await own.newPage();
      await tab.goto(`${analytics.url}/`);
      await tab.getByLabel('API key').fill(INIT_KEY);
      await tab.keyboard.press('Enter');
      await tab.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
      // From the navigation: the most recently run suite is shown.
      await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
      await tab.getByRole('heading', { level: 1, name: 'Analytics: moods' }).waitFor();
      expect(await tab.evaluate(() => document.activeElement?.tagName)).toBe('H1');
      const rows = (selector: string) =>
        tab.locator(`${selector} tbody tr`).evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent!.trim())));

      // Pass rates: 2 of 4 judged plus 6 of 6 greetings for writes-hello, 0 of 6 for writes-bye, all today.
      await tab.locator('#analytics-totals').waitFor();
      expect((await rows('#analytics-totals')).map((row) => row.slice(0, 6))).toEqual([
        [ANALYTICS_SIDES.bye, '6', '0 / 6', '0%', '0%–39%', '0'],
        [ANALYTICS_SIDES.hello, '10', '8 / 10', '80%', '49%–94%', '0'],
      ]);
      const today = new Date().toISOString().slice(0, 10);
      expect(await rows('#analytics-buckets')).toEqual([
        [ANALYTICS_SIDES.bye, today, '0 / 6', '0%', '0%–39%', '0'],
        [ANALYTICS_SIDES.hello, today, '8 / 10', '80%', '49%–94%', '0'],
      ]);
      await tab.locator('#analytics-chart canvas').waitFor();
      expect(await tab.locator('#analytics-chart').getAttribute('aria-label')).toContain(`${ANALYTICS_SIDES.hello}: 80% over the period (49%–94%)`);

      // The flaky case: the judge passed 2 of the 4 trials of one run, so 4 of its 6 pairs disagree.
      expect(await rows('#analytics-flaky')).toEqual([['polite', ANALYTICS_SIDES.hello, '67% of trial pairs disagree', '1 of 1', '2 / 4', '50%']]);

      // The two newest batches compared: writes-bye failed the six greetings that writes-hello passed.
      await tab.locator('#compare-tests').waitFor();
      expect(await tab.getByLabel('Baseline batch').inputValue()).toBe(before);
      expect(await tab.getByLabel('Compared with').inputValue()).toBe(after);
      expect(await tab.locator('#compare-cases').textContent()).toContain('6 cases compared');
      const verdict = (await tab.locator('#compare-tests').textContent())!;
      expect(verdict).toContain('Significant difference');
      expect(verdict).toContain(
        `${after} ${ANALYTICS_SIDES.hello} passes more often than ${before} ${ANALYTICS_SIDES.bye} (p = 0.0313 < 0.05 by the exact sign-flip`,
      );
      expect(verdict).toContain('p = 0.0313 by');
      expect((await rows('#compare-sides')).map((row) => row.slice(0, 5))).toEqual([
        [`${before} ${ANALYTICS_SIDES.bye}`, before, '0 / 6', '0%', '0%–39%'],
        [`${after} ${ANALYTICS_SIDES.hello}`, after, '6 / 6', '100%', '61%–100%'],
      ]);
      expect(await rows('#compare-atk')).toEqual([['1', '0%', '0%', '100%', '100%']]);
      // Each side's label heads its two columns once: the table fits the page.
      expect(await tab.locator('#compare-atk thead th[scope="colgroup"]').allTextContents()).toEqual([
        `${before} ${ANALYTICS_SIDES.bye}`,
        `${after} ${ANALYTICS_SIDES.hello}`,
      ]);
      const fits = await tab.evaluate((): boolean => {
        const right = (selector: string): number => document.querySelector(selector).getBoundingClientRect().right as number;
        return right('#compare-atk') <= right('main') + 1;
      });
      expect(fits).toBe(true);
      expect(await tab.locator('#compare-differing tbody tr').count()).toBe(6);
      expect(await tab.locator('#compare-differing tbody tr').first().textContent()).toMatch(/greets-1.*0 \/ 1 \(0%\).*1 \/ 1 \(100%\)/);
      await tab.screenshot({ path: path.join(ARTIFACTS, 'analytics.png'), fullPage: true });

      // By week: the same numbers in one ISO week. The form works from the keyboard alone.
      await tab.getByLabel('Pass rate by').focus();
      await tab.keyboard.press('ArrowDown');
      await tab.locator('#analytics-buckets thead th', { hasText: 'Week from' }).waitFor();
      expect((await rows('#analytics-buckets')).map((row) => [row[0], row[2]])).toEqual([
        [ANALYTICS_SIDES.bye, '0 / 6'],
        [ANALYTICS_SIDES.hello, '8 / 10'],
      ]);
      await tab.getByLabel('Baseline batch').selectOption(after);
      await tab.getByRole('button', { name: 'Compare' }).click();
      await tab.locator('main', { hasText: 'One batch: its variants are compared with each other.' }).waitFor();
      // One batch of one variant: the API's reason, in words, instead of a comparison.
      expect(await tab.locator('#compare-refused').textContent()).toBe(
        'Nothing to compare: These batches hold a single variant definition: give another batch to compare it with.',
      );
      expect(await tab.locator('#compare-tests').count()).toBe(0);

      // The suite's own page links here.
      await tab.goto(`${analytics.url}/#/suites/moods`);
      await tab.getByRole('link', { name: 'Analytics of this suite' }).click();
      await tab.getByRole('heading', { level: 1, name: 'Analytics: moods' }).waitFor();
      expect(tab.url()).toContain('#/analytics/moods');
    } finally {
      await own.close();
      await analytics.close();
      await fake.close();
      delete process.env.VIEWER_JUDGE_KEY;
    }
  }, 180000);

  it('follows a running batch live: running, then finished, without a reload', async () => {
    const started = await api.call(
      'evals.batches.start',
      startBody({
        suite: { id: 'slow-suite', prompt: 'Write {{word}} slowly' },
        cases: [{ id: 'slow-hello', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' }],
        variants: [{ harness: 'command', model: 'slow', profile: { run: 'sleep 3; echo hello > out.txt' } }],
        trials: 3,
      }),
    );
    expect(started.status).toBe(200);
    const batchId = started.body.id;
    await open(`#/batches/${batchId}`);
    await page.locator('#batch-grid').waitFor();
    const status = page.locator('#batch-status');
    expect(await status.textContent()).toContain('running');
    await page.locator('#batch-status', { hasText: /updating live \((event stream|polling every second)\)/ }).waitFor();
    await shot('batch-running');
    // A marker the page keeps only if it is never reloaded.
    await page.evaluate(() => (window.notReloaded = true));
    await page.waitForFunction(() => document.querySelector('#batch-status')?.textContent?.includes('finished'), null, { timeout: 60000 });
    expect(await page.evaluate(() => window.notReloaded)).toBe(true);
    expect(await page.locator('#batch-grid tbody td').first().textContent()).toContain('3/3 passed');
    expect(await status.textContent()).toContain('3 trials');
    await shot('batch-finished-live');
  }, 90000);

  it('answers a missing page and a missing asset plainly', async () => {
    await open('#/nowhere');
    expect(await page.locator('main h1').textContent()).toBe('Nothing at /nowhere');
    const asset = await fetch(`${server.url}/no-such-asset.js`);
    expect(asset.status).toBe(404);
    expect(((await asset.json()) as { _tag: string })._tag).toBe('NotFound');
    const index = await fetch(`${server.url}/`);
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await index.text()).toContain('<script type="module" src="/app.js">');
  });

  it('measures how long the batch page of a 1,000-trial batch takes to render (reported, not asserted)', async () => {
    // A batch holds at most 100 trials, so the answer of evals.batches.get is made here from the
    // real batch: 100 cases × 2 variants × 5 trials, each run a copy of a real one.
    const template = finished.runs.filter((r: any) => r.case.id === 'say-hello');
    const runs = [];
    for (let c = 0; c < 100; c++) {
      for (const run of template) {
        const trials = Array.from({ length: 5 }, (_, i) => ({
          ...run.trials[i % run.trials.length],
          id: `trl_${c}_${run.variant.model}_${i}`,
          ordinal: i + 1,
        }));
        runs.push({ ...run, id: `run_${c}_${run.variant.model}`, case: { id: `case-${c}`, name: `case-${c}` }, trials });
      }
    }
    const big = { ...finished, id: 'bat_thousand', runs };
    expect(runs.flatMap((r) => r.trials)).toHaveLength(1000);
    const body = JSON.stringify(big);
    await page.route('**/v1/evals.batches.get', (route) => route.fulfill({ status: 200, contentType: 'application/json', body }));
    await page.goto('about:blank');
    const started = Date.now();
    await page.goto(`${server.url}/#/batches/bat_thousand`);
    await page.locator('#batch-grid tbody tr:nth-child(100)').waitFor();
    const elapsed = Date.now() - started;
    await page.unroute('**/v1/evals.batches.get');
    expect(await page.locator('#batch-grid tbody tr').count()).toBe(100);
    const line = `batch page of a 1,000-trial batch (${(body.length / 1024).toFixed(0)} KiB of JSON): ${elapsed} ms from navigation to the grid\n`;
    fs.writeFileSync(path.join(ARTIFACTS, 'viewer-timing.txt'), line);
    process.stderr.write(line);
  });
});

/** Three cases on two variants, two trials each: passes, failures, and a conversation with a scripted user. */
async function makeFinishedBatch(api: ApiClient): Promise<any> {
  const started = await api.call(
    'evals.batches.start',
    startBody({
      suite: { id: 'greetings', prompt: 'Write {{word}} into out.txt' },
      cases: [
        { id: 'say-hello', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' },
        { id: 'say-goodbye', variables: { word: 'goodbye' }, verify: 'grep -q goodbye out.txt' },
        {
          id: 'talk-it-through',
          variables: { word: 'hello' },
          user: { kind: 'scripted', replies: ['please add one more line', 'thanks, that is all'] },
          verify: 'test $(wc -l < out.txt) -eq 3',
        },
      ],
      variants: [agent('fast', 'hello'), agent('careful', 'goodbye')],
      trials: 2,
    }),
  );
  expect(started.status).toBe(200);
  const batch = await waitForBatch(api, started.body.id, 120000);
  expect(batch.status).toBe('finished');
  return batch;
}

/** say-hello again with another verify command: a second version of the case, one trial per variant. */
async function makeSecondCaseVersion(api: ApiClient): Promise<void> {
  const started = await api.call(
    'evals.batches.start',
    startBody({
      suite: { id: 'greetings', prompt: 'Write {{word}} into out.txt' },
      cases: [{ id: 'say-hello', variables: { word: 'hello' }, verify: 'grep -qx hello out.txt' }],
      variants: [agent('fast', 'hello'), agent('careful', 'goodbye')],
      trials: 1,
    }),
  );
  expect(started.status).toBe(200);
  expect((await waitForBatch(api, started.body.id)).status).toBe('finished');
}

/** Three versions; production promoted to v1 when it was written, then moved to v2. */
async function makePrompt(api: ApiClient): Promise<void> {
  const id = 'support/greeting';
  const write = async (body: Record<string, unknown>) => expect((await api.call('prompts.versions.create', { id, ...body })).status).toBe(200);
  await write({ content: 'Hello {{name}}.\nHow can I help?', message: 'first draft', publish: true });
  await write({ content: 'Hello {{name}}, welcome back!\nHow can I help?\nSign-off: Assay', message: 'friendlier' });
  await write({ content: 'Hi {{name}}, welcome back!\nHow can I help?\nSign-off: Assay', message: 'shorter' });
  expect((await api.call('prompts.promote', { id, channel: 'production', version: 2 })).status).toBe(200);
}
