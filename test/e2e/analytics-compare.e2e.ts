import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { makeRepository, waitForBatch } from '../support/evals';
import type { ApiClient } from '../support/http-client';
import { CLI, INIT_KEY, InProcessServer, startInProcess, tempDir } from '../support/servers';

const CHROMIUM = '/usr/bin/chromium';
const chromiumAbsent = fs.existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (.ci/run installs Debian's chromium package)`;
if (chromiumAbsent !== null) process.stderr.write(`Skipping the viewer's comparison test: ${chromiumAbsent}\n`);
const itWithChromium: jest.It = chromiumAbsent === null ? it : it.skip;

const CAREFUL = { harness: 'command', model: 'none', profile: { name: 'careful', run: 'echo fixed > out.txt' } };
/** Fixes only the first case: 3 of its 9 trials pass. */
const SLOPPY = { harness: 'command', model: 'none', profile: { name: 'sloppy', run: 'case "$ASSAY_PROMPT" in *fix-1*) echo fixed > out.txt;; esac' } };
const LABELS = { careful: 'command/none (careful)', sloppy: 'command/none (sloppy)' };
const suite = { id: 'gate', prompt: 'Fix {{bug}}' };
const cases = [1, 2, 3].map((n) => ({ id: `fix-${n}`, variables: { bug: `fix-${n}` }, verify: 'grep -q fixed out.txt' }));
const TOO_FEW = 'Not enough cases to tell: with 3 cases the smallest possible p is 0.25; at least 6 are needed.';

/**
 * The comparison verdict as a team reads it before trusting a gate: over real HTTP, from
 * `assay report --compare` (the built CLI as a child process) and in the viewer (chromium).
 * Three cases cannot make any test on cases significant, and the verdict says so; a batch that
 * scored nothing has nothing to compare, and the viewer's default comparison passes over it.
 */
describe('the comparison verdict', () => {
  let server: InProcessServer;
  let api: ApiClient;
  const batches: Record<'both' | 'careful' | 'voided', string> = { both: '', careful: '', voided: '' };

  async function run(body: Record<string, unknown>): Promise<any> {
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id, 120_000);
    expect(batch.status).toBe('finished');
    return batch;
  }

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    batches.both = (await run({ suite, cases, variants: [CAREFUL, SLOPPY], trials: 3 })).id;
    batches.careful = (await run({ suite, cases, variants: [CAREFUL], trials: 1 })).id;
    // The newest: every clone fails at its checkout, so every trial is void.
    const { url } = makeRepository();
    const voided = await run({ suite, cases: cases.map((c) => ({ ...c, source: { kind: 'repo', url, ref: 'no-such-ref' } })), variants: [CAREFUL], trials: 1 });
    expect(voided.runs.flatMap((r: any) => r.trials.map((t: any) => t.status))).toEqual(['void', 'void', 'void']);
    batches.voided = voided.id;
  }, 300_000);

  afterAll(() => server.close());

  const report = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const env = { PATH: process.env.PATH ?? '', ASSAY_URL: server.url, ASSAY_API_KEY: INIT_KEY };
      execFile(process.execPath, [CLI, 'report', ...args], { env }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  it('uses every trial yet says 9/9 against 3/9 over 3 cases cannot be told apart: the smallest p, the cases needed, the test, the interval', async () => {
    const answer = await api.call('analytics.compare', { batchIds: [batches.both] });
    expect(answer.status).toBe(200);
    expect(answer.body.sides.map((side: any) => [side.label, side.passed, side.scored])).toEqual([
      [LABELS.careful, 9, 9],
      [LABELS.sloppy, 3, 9],
    ]);
    const [test] = answer.body.tests;
    expect(test).toMatchObject({
      baseline: LABELS.careful,
      other: LABELS.sloppy,
      comparedCases: 3,
      differingCases: 2,
      pValue: 0.5,
      smallestPossiblePValue: 0.25,
      casesNeeded: 6,
      significant: false,
      conclusion: 'too-few-cases',
      method: 'exact sign-flip permutation test over cases, each weighted by its trials (McNemar exact with one trial per case)',
      difference: { estimate: expect.closeTo(3 / 9 - 1, 12), method: 'percentile bootstrap over cases (10,000 seeded resamples)' },
    });
    // Resampling 3 cases (gaps 0, −1, −1): every resample lies between −100 and 0 points.
    expect(test.difference.interval.low).toBeCloseTo(-1, 12);
    expect(test.difference.interval.high).toBeLessThanOrEqual(0);
    expect(test.verdict).toBe(
      `${TOO_FEW} ${LABELS.sloppy} − ${LABELS.careful}: −67 points of pass rate [95% CI −100, ${pointsOf(test.difference.interval.high)}] over 3 cases.`,
    );

    const printed = await report('--suite', 'gate', '--compare', batches.both);
    expect(printed).toMatchObject({ code: 0, stderr: '' });
    expect(printed.stdout).toContain(test.verdict);
  });

  it('says "nothing to compare" when the baseline scored nothing, over HTTP and from the CLI', async () => {
    const answer = await api.call('analytics.compare', { batchIds: [batches.voided, batches.careful] });
    expect(answer.status).toBe(200);
    expect(answer.body.comparedCases).toBe(0);
    expect(answer.body.tests).toEqual([
      expect.objectContaining({
        conclusion: 'nothing-to-compare',
        pValue: null,
        difference: null,
        significant: false,
        verdict: `Nothing to compare: the baseline ${batches.voided} ${LABELS.careful} has no scored trial (every trial was void, or none ran).`,
      }),
    ]);
    const printed = await report('--suite', 'gate', '--compare', `${batches.voided},${batches.careful}`);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain(`Nothing to compare: the baseline ${batches.voided} ${LABELS.careful} has no scored trial`);
  });

  itWithChromium('in the viewer, compares the two newest batches that scored a trial by default, and says why a void one has nothing to compare', async () => {
    if (viewerDirectory() === null) throw new Error('dist/viewer is missing: run "npm run build" first (npm test does).');
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], env: { ...process.env, TMPDIR: tempDir('assay-chromium-') } });
      const tab = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await tab.goto(`${server.url}/`);
      await tab.getByLabel('API key').fill(INIT_KEY);
      await tab.keyboard.press('Enter');
      await tab.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
      await tab.goto(`${server.url}/#/analytics/gate`);
      await tab.locator('#compare-tests').waitFor();
      // The void batch is the newest, listed as such, and passed over.
      expect(await tab.getByLabel('Baseline batch').inputValue()).toBe(batches.both);
      expect(await tab.getByLabel('Compared with').inputValue()).toBe(batches.careful);
      expect(await tab.locator('#compare-other option', { hasText: batches.voided }).textContent()).toContain('nothing scored');
      const verdicts = await tab.locator('#compare-tests li').evaluateAll((items) => items.map((item: any) => item.textContent.trim()));
      expect(verdicts).toHaveLength(2);
      for (const verdict of verdicts) expect(verdict).toContain(TOO_FEW);
      expect(verdicts[0]).toContain('by exact sign-flip permutation test over cases, each weighted by its trials');
      expect(verdicts[0]).toMatch(/p = 0\.5000 \(the smallest possible here: 0\.2500\) by exact sign-flip/);
      expect(verdicts[0]).toContain('[95% CI −100, 0] over 3 cases');
      expect(verdicts[0]).toContain('the 95% interval by percentile bootstrap over cases (10,000 seeded resamples)');

      await tab.getByLabel('Baseline batch').selectOption(batches.voided);
      await tab.getByRole('button', { name: 'Compare' }).click();
      await tab.locator('#compare-tests li', { hasText: 'Nothing to compare' }).waitFor();
      expect((await tab.locator('#compare-tests').textContent())!.trim()).toBe(
        `Nothing to compare: the baseline ${batches.voided} ${LABELS.careful} has no scored trial (every trial was void, or none ran).`,
      );
      expect(await tab.locator('#compare-tests strong').textContent()).toBe('Nothing to compare');
    } finally {
      await browser?.close();
    }
  });
});

function pointsOf(value: number): string {
  const rounded = Math.round(value * 100);
  return rounded === 0 ? '0' : `${rounded > 0 ? '+' : '−'}${Math.abs(rounded)}`;
}
