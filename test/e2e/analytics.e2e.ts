import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { ANALYTICS_RUNS, ANALYTICS_TALLIES } from '#modules/analytics/analytics-documents';
import { CompareHandler } from '#modules/analytics/compare/compare.handler';
import { CompareVariants } from '#modules/analytics/compare/compare.query';
import { FlakyHandler } from '#modules/analytics/flaky/flaky.handler';
import { ListFlaky } from '#modules/analytics/flaky/flaky.query';
import { PassRatesHandler } from '#modules/analytics/pass-rates/pass-rates.handler';
import { GetPassRates } from '#modules/analytics/pass-rates/pass-rates.query';
import { wilsonInterval } from '#shared/statistics';
import { FakeProvider, startFakeProvider } from '../support/fake-provider';
import type { ApiClient } from '../support/http-client';
import { rebuildFromLog, replayTwice, snapshot } from '../support/read-models';
import { waitForBatch } from '../support/evals';
import { CLI, INIT_KEY, InProcessServer, keyFor, startInProcess, tempDir } from '../support/servers';

const HELLO = { harness: 'command', model: 'none', profile: { name: 'writes-hello', run: 'echo hello > out.txt' } };
const BYE = { harness: 'command', model: 'none', profile: { name: 'writes-bye', run: 'echo bye > out.txt' } };
const JUDGE = { name: 'polite', kind: 'judge', prompt: 'Did the agent answer politely?' };
const verdict = (choice: 'pass' | 'fail') => ({ object: { choice, reason: `judged ${choice}` } });

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The bucket starts computed here by hand, from the calendar: UTC hour, UTC day, ISO week from Monday. */
function handBucket(iso: string, bucket: 'hour' | 'day' | 'week'): string {
  const at = new Date(iso);
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  if (bucket === 'hour') return new Date(day + at.getUTCHours() * HOUR).toISOString();
  if (bucket === 'day') return new Date(day).toISOString();
  const sinceMonday = (at.getUTCDay() + 6) % 7;
  return new Date(day - sinceMonday * DAY).toISOString();
}

const choose = (n: number, k: number): number => (k < 0 || k > n ? 0 : k === 0 ? 1 : (choose(n - 1, k - 1) * n) / k);

describe('analytics: pass rates, comparisons and flakiness over a real history', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let fake: FakeProvider;
  /** Batch id → its start and, per variant profile name, passed of scored trials. */
  const history: Array<{ id: string; startedAt: string; suite: string; outcomes: Partial<Record<string, { passed: number; scored: number }>> }> = [];
  const batches: Record<string, any> = {};

  async function run(name: string, body: Record<string, unknown>, outcomes: Record<string, { passed: number; scored: number }>): Promise<any> {
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id, 120_000);
    expect(batch.status).toBe('finished');
    history.push({ id: batch.id, startedAt: batch.startedAt, suite: (body.suite as { id: string }).id, outcomes });
    batches[name] = batch;
    return batch;
  }

  beforeAll(async () => {
    fake = await startFakeProvider();
    const config = path.join(tempDir(), 'assay.yaml');
    fs.writeFileSync(
      config,
      [
        'allowUnsandboxed: true',
        'providers:',
        `  grader: { protocol: openai, baseURL: "${fake.url}", apiKeyEnv: ANALYTICS_JUDGE_KEY }`,
        'judges: { provider: grader, model: judge-model }',
      ].join('\n'),
    );
    process.env.ANALYTICS_JUDGE_KEY = 'sk-analytics-judge-0123456789';
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: config });
    api = server.client;
    const cases = [
      { id: 'always', verify: 'test -f out.txt' },
      { id: 'hello', verify: 'grep -q hello out.txt' },
      { id: 'never', verify: 'grep -q nope out.txt' },
    ];
    const suite = { id: 'analytics-suite', prompt: 'Write a greeting' };
    // 3 trials of 3 cases: HELLO passes always and hello (6 of 9), BYE only always (3 of 9).
    await run(
      'first',
      { suite, cases, variants: [HELLO, BYE], trials: 3 },
      { 'writes-hello': { passed: 6, scored: 9 }, 'writes-bye': { passed: 3, scored: 9 } },
    );
    await run('second', { suite, cases, variants: [HELLO], trials: 2 }, { 'writes-hello': { passed: 4, scored: 6 } });
    // A judged case with a known mix: the judge answers pass, fail, pass, fail to HELLO's 4 trials, then 3 of 4 to BYE's.
    const judged = { suite: { id: 'judged-suite', prompt: 'Greet the user' }, cases: [{ id: 'judged', validator: JUDGE }, cases[0]], trials: 4 };
    fake.answer(verdict('pass'), verdict('fail'), verdict('pass'), verdict('fail'));
    await run('judgedHello', { ...judged, variants: [HELLO] }, { 'writes-hello': { passed: 6, scored: 8 } });
    fake.answer(verdict('pass'), verdict('pass'), verdict('fail'), verdict('pass'));
    await run('judgedBye', { ...judged, variants: [BYE] }, { 'writes-bye': { passed: 7, scored: 8 } });
    // Six cases HELLO passes and BYE fails, one trial each: McNemar's exact p is 2 / 2^6.
    const six = Array.from({ length: 6 }, (_, index) => ({ id: `greets-${index + 1}`, verify: 'grep -q hello out.txt' }));
    await run('six', { suite: { id: 'six-suite', prompt: 'Greet' }, cases: six, variants: [HELLO, BYE], trials: 1 }, {});
  }, 600_000);

  afterAll(async () => {
    await server.close();
    await fake.close();
    delete process.env.ANALYTICS_JUDGE_KEY;
  });

  const lineOf = (answer: any, profile: string) => answer.variants.find((line: any) => line.variant.profileName === profile);

  it('counts pass rates per variant definition per bucket, as computed by hand', async () => {
    const suiteHistory = history.filter((batch) => batch.suite === 'analytics-suite');
    for (const bucket of ['hour', 'day', 'week'] as const) {
      const answer = await api.call('analytics.passRates', { suiteId: 'analytics-suite', bucket });
      expect(answer.status).toBe(200);
      expect(answer.body.variants).toHaveLength(2);
      for (const profile of ['writes-hello', 'writes-bye']) {
        const expected = new Map<string, { passed: number; scored: number }>();
        for (const batch of suiteHistory) {
          const outcome = batch.outcomes[profile];
          if (!outcome) continue;
          const start = handBucket(batch.startedAt, bucket);
          const known = expected.get(start) ?? { passed: 0, scored: 0 };
          expected.set(start, { passed: known.passed + outcome.passed, scored: known.scored + outcome.scored });
        }
        const line = lineOf(answer.body, profile);
        expect(line.variantKey).toMatch(/^vk_[0-9a-f]{20}$/);
        expect(line.buckets.map((entry: any) => [entry.start, { passed: entry.passed, scored: entry.scored }])).toEqual(
          [...expected.entries()].sort((a, b) => a[0].localeCompare(b[0])),
        );
      }
    }
    const day = (await api.call('analytics.passRates', { suiteId: 'analytics-suite', bucket: 'day' })).body;
    const hello = lineOf(day, 'writes-hello');
    expect(hello.total).toMatchObject({ trials: 15, scored: 15, passed: 10, failed: 5, voided: 0, passRate: 10 / 15 });
    expect(hello.total.interval).toEqual(wilsonInterval(10, 15));
    expect(lineOf(day, 'writes-bye').total).toMatchObject({ scored: 9, passed: 3, passRate: 1 / 3 });
    expect(hello.total.commandMedian).toEqual(expect.any(Number));
    expect(hello.total.costPerPassedTrial).toEqual(expect.objectContaining({ incomplete: expect.any(Boolean) }));
  });

  it('filters by case, by variant key, by time and across the organization', async () => {
    const byCase = (await api.call('analytics.passRates', { caseId: 'hello', bucket: 'week' })).body;
    expect(lineOf(byCase, 'writes-hello').total).toMatchObject({ passed: 5, scored: 5 });
    expect(lineOf(byCase, 'writes-bye').total).toMatchObject({ passed: 0, scored: 3 });
    const suiteAndCase = (await api.call('analytics.passRates', { suiteId: 'analytics-suite', caseId: 'always', bucket: 'day' })).body;
    expect(lineOf(suiteAndCase, 'writes-hello').total).toMatchObject({ passed: 5, scored: 5 });
    const helloKey = lineOf(byCase, 'writes-hello').variantKey;
    const oneVariant = (await api.call('analytics.passRates', { variant: helloKey, bucket: 'day' })).body;
    expect(oneVariant.variants.map((line: any) => line.variantKey)).toEqual([helloKey]);
    // The organization: every suite's trials of HELLO (15 + 8 + 6).
    expect(oneVariant.variants[0].total).toMatchObject({ scored: 29, passed: 10 + 6 + 6 });
    // `from` counts from the start of its bucket: an hour that begins after the last batch holds nothing.
    const later = new Date(Date.now() + 2 * HOUR).toISOString();
    const empty = await api.call('analytics.passRates', {
      suiteId: 'analytics-suite',
      bucket: 'hour',
      from: later,
      to: new Date(Date.now() + 3 * HOUR).toISOString(),
    });
    expect(empty.body.variants).toEqual([]);
  });

  it('compares variants with pass@k and pass^k by the unbiased estimators', async () => {
    const answer = await api.call('analytics.compare', { batchIds: [batches.judgedHello.id, batches.judgedBye.id] });
    expect(answer.status).toBe(200);
    const { sides, comparedCases, differingCases, tests } = answer.body;
    expect(comparedCases).toBe(2);
    expect(sides.map((side: any) => side.batchId)).toEqual([batches.judgedHello.id, batches.judgedBye.id]);
    // Per case (n scored, c passed): HELLO judged (4, 2) and always (4, 4); BYE judged (4, 3) and always (4, 4).
    const cases = {
      hello: [
        [4, 2],
        [4, 4],
      ],
      bye: [
        [4, 3],
        [4, 4],
      ],
    };
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    for (const [index, tallies] of [cases.hello, cases.bye].entries()) {
      const expected = [1, 2, 3, 4].map((k) => ({
        k,
        passAtK: mean(tallies.map(([n, c]) => 1 - choose(n - c, k) / choose(n, k))),
        passHatK: mean(tallies.map(([n, c]) => choose(c, k) / choose(n, k))),
      }));
      expect(sides[index].atK.map((entry: any) => entry.k)).toEqual([1, 2, 3, 4]);
      sides[index].atK.forEach((entry: any, k: number) => {
        expect(entry.passAtK).toBeCloseTo(expected[k].passAtK, 10);
        expect(entry.passHatK).toBeCloseTo(expected[k].passHatK, 10);
      });
    }
    expect(sides[0].atK[1].passAtK).toBeCloseTo((5 / 6 + 1) / 2, 10);
    expect(differingCases).toEqual([
      expect.objectContaining({ caseId: 'judged', sides: [expect.objectContaining({ passed: 2 }), expect.objectContaining({ passed: 3 })] }),
    ]);
    // Two cases: no test on cases can tell, and the answer says so rather than "no significant difference".
    expect(tests).toEqual([
      expect.objectContaining({
        comparedCases: 2,
        differingCases: 1,
        pValue: 1,
        smallestPossiblePValue: 0.5,
        casesNeeded: 6,
        significant: false,
        conclusion: 'too-few-cases',
        difference: expect.objectContaining({ estimate: 7 / 8 - 6 / 8 }),
        verdict: expect.stringMatching(/^Not enough cases to tell: with 2 cases the smallest possible p is 0\.5; at least 6 are needed\./),
      }),
    ]);
  });

  it('says a difference on six of six cases is real, with McNemar exact p = 2/64', async () => {
    const byBatch = (await api.call('analytics.compare', { batchIds: [batches.six.id] })).body;
    expect(byBatch.tests[0].pValue).toBeCloseTo(2 / 64, 12);
    expect(byBatch.tests[0]).toMatchObject({
      significant: true,
      conclusion: 'difference',
      differingCases: 6,
      method: expect.stringContaining('sign-flip permutation test over cases, each weighted by its trials'),
      difference: { estimate: -1, interval: { low: -1, high: -1 }, method: 'percentile bootstrap over cases (10,000 seeded resamples)' },
      verdict: expect.stringContaining('passes more often than'),
    });
    const keys = byBatch.sides.map((side: any) => side.variantKey);
    const bySuite = (await api.call('analytics.compare', { suiteId: 'six-suite', variants: keys })).body;
    expect(bySuite.tests[0].pValue).toBeCloseTo(2 / 64, 12);
    expect(bySuite.sides.map((side: any) => side.variantKey)).toEqual(keys);
    expect(Object.fromEntries(bySuite.sides.map((side: any) => [side.variant.profileName, [side.passed, side.scored]]))).toEqual({
      'writes-hello': [6, 6],
      'writes-bye': [0, 6],
    });
  });

  it('lists the flaky (case, variant) pairs, the most mixed first', async () => {
    const answer = (await api.call('analytics.flaky', { suiteId: 'judged-suite' })).body;
    // Within a run of 4: HELLO 2 passed and 2 failed disagree on 4 of 6 pairs; BYE 3 and 1 on 3 of 6.
    expect(answer.cases.map((entry: any) => [entry.caseId, entry.variant.profileName, entry.flakiness])).toEqual([
      ['judged', 'writes-hello', 4 / 6],
      ['judged', 'writes-bye', 3 / 6],
    ]);
    expect(answer.total).toBe(2);
    const everywhere = (await api.call('analytics.flaky', { limit: 1 })).body;
    expect(everywhere.cases).toHaveLength(1);
    expect(everywhere.total).toBe(2);
  });

  it('rebuilds from the log into the same documents and the same answers', async () => {
    const now = new Date();
    const answers = async (store: ReadStore) => {
      const window = { from: null, to: null, bucket: 'hour' as const };
      const none = { suiteId: null, caseId: null, variantKey: null };
      return [
        await new PassRatesHandler(store).execute(new GetPassRates('acme', none, window, now)),
        await new PassRatesHandler(store).execute(new GetPassRates('acme', { ...none, suiteId: 'analytics-suite' }, { ...window, bucket: 'week' }, now)),
        await new CompareHandler(store).execute(new CompareVariants('acme', [batches.first.id, batches.second.id], null, null)),
        await new FlakyHandler(store).execute(new ListFlaky('acme', null, 50)),
      ];
    };
    const live = await answers(server.runtime.readStore);
    const rebuilt = await rebuildFromLog(server.runtime.eventStore);
    expect(await answers(rebuilt)).toEqual(live);
    const collections = [ANALYTICS_RUNS, ANALYTICS_TALLIES];
    expect(await snapshot(rebuilt, collections)).toEqual(await snapshot(server.runtime.readStore, collections));
    expect(await snapshot(await replayTwice(server.runtime.eventStore), collections)).toEqual(await snapshot(server.runtime.readStore, collections));
  });

  it('refuses bad bodies on both sides of each bound, and unknown ids with 404', async () => {
    const status = async (operation: string, body: unknown) => (await api.call(operation, body)).status;
    const to = '2026-01-01T00:00:00Z';
    const hoursBefore = (hours: number) => new Date(Date.parse(to) - hours * HOUR).toISOString();
    expect(await status('analytics.passRates', { bucket: 'month' })).toBe(400);
    expect(await status('analytics.passRates', { bucket: 'hour', from: hoursBefore(1000), to })).toBe(200);
    expect(await status('analytics.passRates', { bucket: 'hour', from: hoursBefore(1001), to })).toBe(400);
    expect(await status('analytics.passRates', { from: to, to })).toBe(400);
    expect(await status('analytics.passRates', { from: 'yesterday' })).toBe(400);
    expect(await status('analytics.passRates', { variant: 'vk_123' })).toBe(400);
    expect(await status('analytics.passRates', { suiteId: 'no-such-suite' })).toBe(404);
    expect(await status('analytics.passRates', { caseId: 'no-such-case' })).toBe(404);
    expect(await status('analytics.compare', {})).toBe(400);
    expect(await status('analytics.compare', { batchIds: [] })).toBe(400);
    expect(await status('analytics.compare', { batchIds: Array.from({ length: 11 }, (_, i) => `bat_${i}`) })).toBe(400);
    expect(await status('analytics.compare', { batchIds: Array.from({ length: 10 }, (_, i) => `bat_${i}`) })).toBe(404);
    expect(await status('analytics.compare', { batchIds: [batches.second.id] })).toBe(400);
    expect(await status('analytics.compare', { batchIds: [batches.first.id], suiteId: 'analytics-suite' })).toBe(400);
    expect(await status('analytics.compare', { suiteId: 'analytics-suite', variants: ['vk_00000000000000000000'] })).toBe(400);
    expect(await status('analytics.compare', { suiteId: 'analytics-suite', variants: ['vk_00000000000000000000', 'vk_00000000000000000001'] })).toBe(404);
    expect(await status('analytics.flaky', { limit: 0 })).toBe(400);
    expect(await status('analytics.flaky', { limit: 500 })).toBe(200);
    expect(await status('analytics.flaky', { limit: 501 })).toBe(400);
    expect(await status('analytics.flaky', { suiteId: 'Not A Slug' })).toBe(400);
  });

  it("shows nothing of another organization's history, and needs evals:read", async () => {
    const other = await keyFor(server, 'other-org', ['evals:read']);
    expect((await other.call('analytics.passRates', { bucket: 'week' })).body.variants).toEqual([]);
    expect((await other.call('analytics.flaky', {})).body.cases).toEqual([]);
    expect((await other.call('analytics.compare', { batchIds: [batches.first.id] })).status).toBe(404);
    expect((await other.call('analytics.passRates', { suiteId: 'analytics-suite' })).status).toBe(404);
    const promptsOnly = await keyFor(server, 'acme', ['prompts:read']);
    expect((await promptsOnly.call('analytics.passRates', {})).status).toBe(403);
  });

  it('prints the pass-rate table and a comparison with `assay report` (the built CLI, as a child process)', async () => {
    const report = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const env = { PATH: process.env.PATH ?? '', ASSAY_URL: server.url, ASSAY_API_KEY: INIT_KEY };
        execFile(process.execPath, [CLI, 'report', ...args], { env }, (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const today = new Date().toISOString().slice(0, 10);
    const printed = await report('--suite', 'analytics-suite', '--since', today, '--bucket', 'week', '--compare', `${batches.first.id},${batches.second.id}`);
    expect(printed).toMatchObject({ code: 0, stderr: '' });
    const totals = printed.stdout.split('\n').filter((line) => line.startsWith('total'));
    expect(totals).toEqual([
      expect.stringMatching(/command\/none \(writes-bye\)\s+9\s+3\s+6\s+0\s+33%/),
      expect.stringMatching(/command\/none \(writes-hello\)\s+15\s+10\s+5\s+0\s+67%/),
    ]);
    expect(printed.stdout).toContain(lineOf((await api.call('analytics.passRates', { suiteId: 'analytics-suite' })).body, 'writes-hello').variantKey);
    expect(printed.stdout).toMatch(/pass@1\s+pass\^1/);
    expect(printed.stdout).toContain('Not enough cases to tell: with 3 cases the smallest possible p is 0.25; at least 6 are needed.');
    const unknown = await report('--suite', 'no-such-suite');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Suite "no-such-suite" does not exist');
    const bad = await report('--suite', 'analytics-suite', '--bucket', 'month');
    expect(bad.code).toBe(2);
    expect((await report('--suite', 'analytics-suite', '--since', 'yesterday')).stderr).toContain('--since takes an ISO-8601 date');
  });

  describe('evals.runs.rescore', () => {
    const judgedRun = () => batches.judgedHello.runs.find((candidate: any) => candidate.case.id === 'judged');

    it('judges the stored conversations again, beside the original results, which stay as they were', async () => {
      const runId = judgedRun().id;
      const before = (await api.call('evals.runs.get', { id: runId })).body;
      const weekly = { suiteId: 'judged-suite', bucket: 'week', to: new Date(Date.now() + HOUR).toISOString() };
      const analyticsBefore = (await api.call('analytics.passRates', weekly)).body;
      fake.requests.length = 0;
      fake.setDefault(verdict('pass'));
      const rescore = await api.call('evals.runs.rescore', { id: runId, validator: { ...JUDGE, name: 'kinder', prompt: 'Was the agent at all helpful?' } });
      expect(rescore.status).toBe(200);
      expect(rescore.body.rescoreId).toMatch(/^rsc_/);
      expect(rescore.body.original).toMatchObject({ passed: 2, failed: 2, scored: 4 });
      expect(rescore.body.rescored).toMatchObject({ passed: 4, failed: 0, scored: 4, passRate: 1 });
      expect(rescore.body.trials).toHaveLength(4);
      for (const trial of rescore.body.trials) {
        expect(trial.rescored).toBe('passed');
        expect(trial.validations[0]).toMatchObject({ name: 'kinder', kind: 'judge', status: 'passed', judgment: { choice: 'pass', model: 'judge-model' } });
      }
      // The judge read the new rubric and the stored conversation (the opening prompt).
      expect(fake.requests).toHaveLength(4);
      expect(JSON.stringify(fake.requests[0].body.messages)).toContain('Was the agent at all helpful?');
      expect(JSON.stringify(fake.requests[0].body.messages)).toContain('Greet the user');
      expect((await api.call('evals.runs.get', { id: runId })).body).toEqual(before);
      expect((await api.call('analytics.passRates', weekly)).body).toEqual(analyticsBefore);
      // Recorded in the log, linked to the original trials.
      const stream = await server.runtime.eventStore.readStream(`rescore-${rescore.body.rescoreId}`);
      expect(stream.map((event) => event.type)).toEqual(['RunRescored', 'TrialRescored', 'TrialRescored', 'TrialRescored', 'TrialRescored']);
      expect(
        stream
          .slice(1)
          .map((event) => (event.data as { trialId: string }).trialId)
          .sort(),
      ).toEqual(before.trials.map((trial: any) => trial.id).sort());
      expect(JSON.stringify(stream)).not.toContain(process.env.ANALYTICS_JUDGE_KEY);
    });

    it('answers 502 when the provider fails, recording nothing', async () => {
      const runId = judgedRun().id;
      const head = await server.runtime.eventStore.headPosition();
      fake.setDefault({ status: 500, error: 'the grader is down' });
      const answer = await api.call('evals.runs.rescore', { id: runId, validator: JUDGE });
      expect(answer.status).toBe(502);
      expect(answer.body).toEqual({ _tag: 'BadGateway', message: expect.stringContaining('HTTP 500') });
      expect(await server.runtime.eventStore.headPosition()).toBe(head);
      fake.setDefault(verdict('pass'));
    });

    it('voids a trial the judge answers outside the choices', async () => {
      fake.setDefault({ object: { choice: 'maybe', reason: 'unsure' } });
      const answer = await api.call('evals.runs.rescore', { id: judgedRun().id, validator: JUDGE });
      expect(answer.status).toBe(200);
      expect(answer.body.rescored).toMatchObject({ voided: 4, scored: 0, passRate: null });
      expect(answer.body.trials[0].validations[0]).toMatchObject({ status: 'error' });
      fake.setDefault(verdict('pass'));
    });

    it('refuses files, bad forms and unknown or foreign runs', async () => {
      const runId = judgedRun().id;
      const files = await api.call('evals.runs.rescore', { id: runId, validator: { ...JUDGE, files: ['out.txt'] } });
      expect(files.status).toBe(400);
      expect(files.body.message).toContain('workspaces are gone');
      expect((await api.call('evals.runs.rescore', { id: runId })).status).toBe(400);
      expect((await api.call('evals.runs.rescore', { id: runId, validator: { ...JUDGE, kind: 'code' } })).status).toBe(400);
      expect((await api.call('evals.runs.rescore', { id: runId, validator: { ...JUDGE, prompt: '' } })).status).toBe(400);
      expect((await api.call('evals.runs.rescore', { id: runId, validator: { ...JUDGE, prompt: 'x'.repeat(8001) } })).status).toBe(400);
      expect((await api.call('evals.runs.rescore', { id: runId, validator: { ...JUDGE, prompt: 'x'.repeat(8000) } })).status).toBe(200);
      expect((await api.call('evals.runs.rescore', { id: runId, validator: { ...JUDGE, threshold: 1.01 } })).status).toBe(400);
      expect((await api.call('evals.runs.rescore', { id: 'x'.repeat(201), validator: JUDGE })).status).toBe(400);
      expect((await api.call('evals.runs.rescore', { id: 'run_nothing', validator: JUDGE })).status).toBe(404);
      const other = await keyFor(server, 'other-org', ['evals:read', 'evals:write']);
      expect((await other.call('evals.runs.rescore', { id: runId, validator: JUDGE })).status).toBe(404);
      const reader = await keyFor(server, 'acme', ['evals:read']);
      expect((await reader.call('evals.runs.rescore', { id: runId, validator: JUDGE })).status).toBe(403);
    });
  });
});
