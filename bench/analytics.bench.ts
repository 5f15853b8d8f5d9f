/**
 * "analytics": each analytics query over a 100,000-trial history. The history is seeded straight
 * into the read store through the analytics projection (the events a server would have recorded:
 * BatchStarted, the trials' commands and verdicts), with the suite and case documents the
 * queries check; then each query is run through its handler many times. Target: at most 50 ms.
 */
import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { analyticsProjection } from '#modules/analytics/analytics.projection';
import { CompareHandler } from '#modules/analytics/compare/compare.handler';
import { CompareVariants } from '#modules/analytics/compare/compare.query';
import { FlakyHandler } from '#modules/analytics/flaky/flaky.handler';
import { ListFlaky } from '#modules/analytics/flaky/flaky.query';
import { PassRatesHandler } from '#modules/analytics/pass-rates/pass-rates.handler';
import { GetPassRates } from '#modules/analytics/pass-rates/pass-rates.query';
import { plainCase } from '../test/support/eval-case';
import { variantKey } from '#modules/analytics/variant-key';
import { planBatch } from '#modules/evals/batches/batch-plan';
import type { BatchStarted } from '#modules/evals/batches/batch.events';
import { CASES, caseDocumentId } from '#modules/evals/cases/case.projection';
import type { EvalCase, VariantDefinition } from '#shared/eval-definitions';
import { STRICT_EXECUTION_POLICY } from '#modules/evals/shared/execution-policy';
import { SUITES, suiteDocumentId } from '#modules/evals/suites/suite.projection';
import { trialCosts } from '#modules/evals/trials/costs';
import type { Progress, Suite } from './support/suite';
import { median, p99, Row, startTimer } from './support/table';

const ORG = 'bench';
const SUITES_SEEDED = 2;
const CASES_PER_SUITE = 25;
const VARIANTS = 4;
const TRIALS = 5;
/** 2 suites × 25 cases × 4 variants × 5 trials = 1,000 trials a round; 100 rounds = 100,000 trials over 100 days. */
const ROUNDS = 100;
const ROUND_EVERY_MS = 24 * 3_600_000;
const REPEATS = 40;
const TARGET = { kind: 'at-most' as const, value: 50, unit: 'ms' };

const evalCase = (id: string): EvalCase => plainCase({ id, name: id, verify: 'test -f out.txt' });
const variant = (index: number): VariantDefinition => ({
  harness: 'command',
  model: 'none',
  profile: { run: `echo ${index}` },
  sandbox: null,
  credentials: null,
});

/** xorshift32: the same history every run. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
}

class EventFeed {
  private position = 0;
  constructor(private readonly store: ReadStore) {}
  async emit(type: string, data: unknown): Promise<void> {
    const event: RecordedEvent = {
      id: String(this.position),
      type,
      data,
      metadata: { organization: ORG, actor: 'bench', correlationId: 'b', causationId: 'b' },
      streamName: 'bench',
      revision: 0,
      position: this.position,
      createdAt: '',
    };
    this.position += 1;
    await analyticsProjection.project(event, this.store);
  }
}

/** One batch per suite per round; each (case, variant) passes with its own rate, some of them mixed. */
async function seed(store: ReadStore, progress: Progress): Promise<string[]> {
  const feed = new EventFeed(store);
  const random = seededRandom(0x5eed);
  const counter = progress.counter('trials seeded', ROUNDS * SUITES_SEEDED * CASES_PER_SUITE * VARIANTS * TRIALS);
  const costs = trialCosts({ harness: 'command', model: 'none', sandbox: null, usage: null, hasSimulatedUser: false });
  const batchIds: string[] = [];
  const first = Date.UTC(2026, 0, 1);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let suiteIndex = 0; suiteIndex < SUITES_SEEDED; suiteIndex += 1) {
      const now = new Date(first + round * ROUND_EVERY_MS + suiteIndex * 60_000);
      const suite = { id: `suite-${suiteIndex}`, name: `Suite ${suiteIndex}`, prompt: 'Solve it', source: null };
      const cases = Array.from({ length: CASES_PER_SUITE }, (_, n) => evalCase(`case-${suiteIndex}-${n}`));
      const plan = { suite, cases, variants: Array.from({ length: VARIANTS }, (_, n) => variant(n)), trials: TRIALS };
      const planned = planBatch(plan, ORG, now, STRICT_EXECUTION_POLICY.defaultUserModel);
      const started: BatchStarted['data'] = {
        batchId: planned.batchId,
        organization: ORG,
        startedAt: now.toISOString(),
        trigger: { source: 'api', url: null },
        checksIn: false,
        trials: TRIALS,
        suite,
        cases,
        runs: planned.runs,
        author: 'bench',
        idempotencyKey: null,
      };
      batchIds.push(planned.batchId);
      await feed.emit('BatchStarted', started);
      for (const [runIndex, run] of planned.runs.entries()) {
        const passRate = ((runIndex * 37) % 11) / 10;
        for (const trialId of run.trialIds) {
          const ref = { trialId, runId: run.runId, batchId: planned.batchId, organization: ORG };
          const commands = 2 + Math.floor(random() * 6);
          for (let step = 0; step < commands; step += 1) await feed.emit('TrialCommandRecorded', { ...ref, entry: { _tag: 'command', exitCode: 0 } });
          const status = random() < passRate ? 'passed' : 'failed';
          await feed.emit('TrialScored', { ...ref, status, modelMs: Math.floor(random() * 60_000), costs, finishedAt: now.toISOString() });
          counter.tick();
        }
      }
    }
  }
  for (let suiteIndex = 0; suiteIndex < SUITES_SEEDED; suiteIndex += 1) {
    await store.collection(SUITES).insertOne({ _id: suiteDocumentId(ORG, `suite-${suiteIndex}`), organization: ORG });
    for (let n = 0; n < CASES_PER_SUITE; n += 1)
      await store.collection(CASES).insertOne({ _id: caseDocumentId(ORG, `case-${suiteIndex}-${n}`), organization: ORG });
  }
  return batchIds;
}

async function timed(name: string, query: () => Promise<unknown>): Promise<Row[]> {
  await query();
  const samples: number[] = [];
  for (let repeat = 0; repeat < REPEATS; repeat += 1) {
    const elapsed = startTimer();
    await query();
    samples.push(elapsed());
  }
  return [
    { benchmark: name, measure: 'median ms', value: median(samples), target: TARGET },
    { benchmark: name, measure: 'p99 ms', value: p99(samples), target: TARGET },
  ];
}

export const analyticsSuite: Suite = {
  name: 'analytics',
  description: `analytics.* query handlers over ${(ROUNDS * SUITES_SEEDED * CASES_PER_SUITE * VARIANTS * TRIALS).toLocaleString('en-US')} trials (${ROUNDS} days, ${SUITES_SEEDED} suites × ${CASES_PER_SUITE} cases × ${VARIANTS} variants × ${TRIALS} trials a day); target at most 50 ms`,
  async run(progress) {
    const store = new MemoryReadStore();
    for (const [collection, indexes] of Object.entries(analyticsProjection.collections)) await store.ensureIndexes(collection, indexes);
    const seeding = startTimer();
    const batchIds = await seed(store, progress);
    progress.log(`seeded in ${(seeding() / 1000).toFixed(1)} s`);
    const passRates = new PassRatesHandler(store);
    const compare = new CompareHandler(store);
    const flaky = new FlakyHandler(store);
    const none = { suiteId: null, caseId: null, variantKey: null };
    const now = new Date(Date.UTC(2026, 0, 1) + ROUNDS * ROUND_EVERY_MS);
    const all = { from: '2026-01-01T00:00:00Z', to: now.toISOString() };
    const keys = [0, 1, 2, 3].map((index) => variantKey(variant(index)));
    return [
      ...(await timed('passRates organization, day, 100 days', () => passRates.execute(new GetPassRates(ORG, none, { ...all, bucket: 'day' }, now)))),
      ...(await timed('passRates suite, hour, 14 days', () =>
        passRates.execute(
          new GetPassRates(
            ORG,
            { ...none, suiteId: 'suite-0' },
            { from: new Date(now.getTime() - 14 * ROUND_EVERY_MS).toISOString(), to: all.to, bucket: 'hour' },
            now,
          ),
        ),
      )),
      ...(await timed('passRates case + variant, week, all', () =>
        passRates.execute(new GetPassRates(ORG, { suiteId: 'suite-1', caseId: 'case-1-3', variantKey: keys[2] }, { ...all, bucket: 'week' }, now)),
      )),
      ...(await timed('compare 2 batches', () => compare.execute(new CompareVariants(ORG, batchIds.slice(-4, -2), null, null)))),
      ...(await timed('compare suite, 4 variants', () => compare.execute(new CompareVariants(ORG, null, 'suite-0', keys)))),
      ...(await timed('flaky suite', () => flaky.execute(new ListFlaky(ORG, 'suite-0', 50)))),
      ...(await timed('flaky organization', () => flaky.execute(new ListFlaky(ORG, null, 50)))),
    ];
  },
};
