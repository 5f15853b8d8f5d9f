/**
 * The totals of evals.batches.list and evals.runs.list are kept by their projections (batch
 * totals, run totals) and read as one document: a page counts nothing, whatever the collection
 * holds. Each event is applied twice (a redelivery changes nothing), on the in-memory store and
 * through the real driver on FerretDB; the totals must equal what counting the documents gives.
 */
import type { EventStore, RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import type { EvalCase, VariantDefinition } from '#shared/eval-definitions';
import { counting } from '../../../test/contract/read-store-costs.contract';
import { plainCase } from '../../../test/support/eval-case';
import { readStoreTargets } from '../../../test/support/mongodb-targets';
import { allProjections } from '../../projections';
import type { BatchStarted, PlannedRun } from './batches/batch.events';
import { BATCHES } from './batches/batch.projection';
import { ListBatchesHandler } from './batches/list-batches/list-batches.handler';
import { ListBatches } from './batches/list-batches/list-batches.query';
import { ListRunsHandler } from './runs/list-runs/list-runs.handler';
import { ListRuns } from './runs/list-runs/list-runs.query';
import { RUNS } from './runs/run.projection';

const ORG = 'acme';
const VARIANT: VariantDefinition = { harness: 'command', model: 'm', profile: { run: 'true' }, sandbox: null, credentials: null };
const CASE: EvalCase = plainCase({ id: 'c1', name: 'Case' });

function run(runId: string, variantId: string): PlannedRun {
  const setup = { prepare: null, prompt: 'p', source: { kind: 'empty' as const }, validator: null, verify: 'true', validatorFiles: [] };
  const variant = { ...VARIANT, model: variantId };
  return {
    runId,
    caseId: 'c1',
    caseName: 'Case',
    variantId,
    variant,
    userModel: null,
    definitionHash: 'h1',
    profileVersion: null,
    trialIds: [],
    setup,
    timeoutMs: 1000,
    tags: [],
  };
}

function started(batchId: string, suiteId: string, minute: number, runs: PlannedRun[]): BatchStarted['data'] {
  const startedAt = new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();
  const suite = { id: suiteId, name: suiteId, prompt: 'p', source: null };
  return {
    batchId,
    organization: ORG,
    startedAt,
    trigger: { source: 'api', url: null },
    checksIn: false,
    trials: 1,
    suite,
    cases: [CASE],
    runs,
    author: 'me',
    idempotencyKey: null,
  };
}

/** A case on two variants; 23 batches over two suites, each running the case on one variant or both. */
function log(): RecordedEvent[] {
  const events: Array<[string, unknown]> = [
    [
      'CaseVersionAppended',
      {
        organization: ORG,
        caseId: 'c1',
        suiteId: 's1',
        definition: CASE,
        parts: [],
        definitionHash: 'h1',
        changes: [],
        author: 'me',
        createdAt: '2025-01-01T00:00:00.000Z',
      },
    ],
    ['CaseVariantDefined', { organization: ORG, caseId: 'c1', variantId: 'var_1', variant: VARIANT, userModel: null, definedAt: '2025-01-01T00:00:00.000Z' }],
    [
      'CaseVariantDefined',
      { organization: ORG, caseId: 'c1', variantId: 'var_2', variant: { ...VARIANT, model: 'n' }, userModel: null, definedAt: '2025-01-01T00:00:00.000Z' },
    ],
  ];
  for (let index = 0; index < 23; index += 1) {
    const runs = index % 3 === 0 ? [run(`run_${index}a`, 'var_1'), run(`run_${index}b`, 'var_2')] : [run(`run_${index}`, index % 2 === 0 ? 'var_1' : 'var_2')];
    events.push(['BatchStarted', started(`bat_${index}`, index % 4 === 0 ? 's2' : 's1', index + 1, runs)]);
  }
  return events.map(([type, data], index) => ({
    id: `e${index}`,
    type,
    data,
    metadata: { organization: ORG, actor: 'me', correlationId: 'c', causationId: 'c' },
    streamName: `s-${index}`,
    revision: 0,
    position: (index + 1) * 10,
    createdAt: '2025-01-01T00:00:00.000Z',
  }));
}

function totalsSuite(name: string, open: () => Promise<{ store: ReadStore; close: () => Promise<void> }>): void {
  describe(`list totals kept by their projections: ${name}`, () => {
    it('answers the totals counting would, with no count of the batches or runs', async () => {
      const { store, close } = await open();
      try {
        const runner = new ProjectionRunner({} as EventStore, store, allProjections, new JsonLogger('silent'));
        await runner.ensureIndexes();
        for (const event of log()) for (let times = 0; times < 2; times += 1) await runner.handle(event);
        const calls = new Map<string, number>();
        const reading = counting(store, calls);
        const batches = new ListBatchesHandler(reading);
        const runs = new ListRunsHandler(reading);
        const [allBatches, suiteBatches] = [await batches.execute(new ListBatches(ORG, null, 5)), await batches.execute(new ListBatches(ORG, null, 5, 's2'))];
        const [allRuns, variantRuns] = [await runs.execute(new ListRuns(ORG, 'c1', null, 2)), await runs.execute(new ListRuns(ORG, 'c1', 'var_2', 1))];
        expect(calls.get('count')).toBeUndefined();
        expect([allBatches.total, suiteBatches.total]).toEqual([
          await store.collection(BATCHES).count({ organization: ORG }),
          await store.collection(BATCHES).count({ organization: ORG, suiteId: 's2' }),
        ]);
        expect([allBatches.total, suiteBatches.total]).toEqual([23, 6]);
        expect([allRuns.total, variantRuns.total]).toEqual([
          await store.collection(RUNS).count({ organization: ORG, 'case.id': 'c1' }),
          await store.collection(RUNS).count({ organization: ORG, 'case.id': 'c1', 'variant.id': 'var_2' }),
        ]);
        expect([allRuns.total, allRuns.runs.length, variantRuns.total]).toEqual([31, 11, 15]);
        // Another organization counts none.
        expect((await batches.execute(new ListBatches('globex', null, 5))).total).toBe(0);
      } finally {
        await close();
      }
    }, 120_000);
  });
}

for (const { name, open } of readStoreTargets('The list totals', 'totals')) totalsSuite(name, open);
