import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import type { EventStore } from '#infrastructure/event-store/event-store.port';
import type { BatchStarted, PlannedRun } from './batches/batch.events';
import type { Projection } from '#infrastructure/processing/projection';
import { CASE_TAGS, CASES, CaseDocument, caseProjection } from './cases/case.projection';
import type { EvalCase, VariantDefinition } from '#shared/eval-definitions';
import { SUITES, SuiteDocument } from './suites/suite.projection';
import { emptyCosts } from './trials/costs';
import { RUNS, RunDocument, runProjection } from './runs/run.projection';
import { allProjections } from '../../projections';

const ORG = 'acme';
const VARIANT: VariantDefinition = { harness: 'command', model: 'm', profile: { run: 'true' }, sandbox: null, credentials: null };
const definition = (name: string, tags: string[]): EvalCase => ({
  id: 'c1',
  name,
  cache: null,
  maxTurns: null,
  timeoutMs: null,
  user: null,
  prepare: null,
  source: null,
  tags,
  variables: {},
  validator: null,
  verify: 'true',
});

function batchStarted(batchId: string, runId: string, startedAt: string, evalCase: EvalCase): BatchStarted['data'] {
  const run: PlannedRun = {
    runId,
    caseId: 'c1',
    caseName: evalCase.name,
    variantId: 'var_1',
    variant: VARIANT,
    userModel: null,
    definitionHash: 'h1',
    profileVersion: null,
    trialIds: [`${runId}-t1`],
    setup: { prepare: null, prompt: `prompt of ${batchId}`, source: { kind: 'empty' }, validator: null, verify: 'true', validatorFiles: [] },
    timeoutMs: 1000,
    tags: evalCase.tags,
  };
  return {
    batchId,
    organization: ORG,
    startedAt,
    trigger: { source: 'api', url: null },
    checksIn: false,
    trials: 1,
    suite: { id: 's1', name: `Suite of ${batchId}`, prompt: 'p', source: null },
    cases: [evalCase],
    runs: [run],
    author: 'me',
    idempotencyKey: null,
  };
}

const scored = (runId: string, batchId: string, status: 'passed' | 'failed') => ({
  trialId: `${runId}-t1`,
  runId,
  batchId,
  organization: ORG,
  status,
  finishedAt: '2025-01-01T00:10:00.000Z',
  exitCode: 0,
  timed: false,
  modelMs: 0,
  sandboxMs: 1,
  sandboxId: null,
  filesChanged: [],
  artifacts: [],
  usage: null,
  costs: emptyCosts(),
  harnessVersion: null,
});

/** Two starts whose events arrive out of their startedAt order, then verdicts for both runs. */
function log(): RecordedEvent[] {
  const events: Array<[string, unknown]> = [
    [
      'CaseVersionAppended',
      {
        organization: ORG,
        caseId: 'c1',
        suiteId: 's1',
        definition: definition('First', ['a']),
        parts: [],
        definitionHash: 'h1',
        changes: [],
        author: 'me',
        createdAt: '2025-01-01T00:00:00.000Z',
      },
    ],
    ['CaseVariantDefined', { organization: ORG, caseId: 'c1', variantId: 'var_1', variant: VARIANT, userModel: null, definedAt: '2025-01-01T00:00:00.000Z' }],
    ['SuiteDefined', { organization: ORG, suite: { id: 's1', name: 'Defined', prompt: 'p', source: null }, definedAt: '2025-01-01T00:00:00.000Z' }],
    ['BatchStarted', batchStarted('bat_2', 'run_2', '2025-01-01T00:02:00.000Z', definition('Newest', ['a', 'n']))],
    ['BatchStarted', batchStarted('bat_1', 'run_1', '2025-01-01T00:01:00.000Z', definition('Older', ['o']))],
    ['TrialScored', scored('run_1', 'bat_1', 'passed')],
    ['TrialScored', scored('run_2', 'bat_2', 'failed')],
  ];
  return recorded(events, 'e');
}

/** The events as the log gives them back, in order, ten positions apart; ids start with `prefix`. */
function recorded(events: Array<[string, unknown]>, prefix: string): RecordedEvent[] {
  return events.map(([type, data], index) => ({
    id: `${prefix}${index}`,
    type,
    data,
    metadata: { organization: ORG, actor: 'me', correlationId: 'c', causationId: 'c' },
    streamName: `s-${index}`,
    revision: 0,
    position: (index + 1) * 10,
    createdAt: '2025-01-01T00:00:00.000Z',
  }));
}

async function project(events: RecordedEvent[], times = 1, projections: readonly Projection[] = allProjections): Promise<MemoryReadStore> {
  const store = new MemoryReadStore();
  const runner = new ProjectionRunner({} as EventStore, store, projections, new JsonLogger('silent'));
  await runner.ensureIndexes();
  for (const event of events) for (let n = 0; n < times; n += 1) await runner.handle(event);
  return store;
}

async function documents(store: MemoryReadStore) {
  const all: Record<string, unknown[]> = {};
  for (const name of await store.collectionNames()) all[name] = await store.collection(name).find({}, { sort: { _id: 1 } });
  return all;
}

describe('case and suite projections', () => {
  it('keeps the newest run by startedAt, whatever order the starts arrive in', async () => {
    const store = await project(log());
    const [document] = await store.collection<CaseDocument>(CASES).find({});
    expect(document).toMatchObject({ name: 'Newest', tags: ['a', 'n'], suite: { id: 's1', name: 'Suite of bat_2' }, lastRunAt: '2025-01-01T00:02:00.000Z' });
    expect(document.setup!.prompt).toBe('prompt of bat_2');
    expect(document.versions).toHaveLength(1);
    expect(document.variants).toHaveLength(1);
    expect(document.variants[0]).toMatchObject({
      runs: 2,
      lastRunId: 'run_2',
      status: 'running',
      distribution: { trials: 1, scored: 1, failed: 1, passed: 0 },
    });
    const [tags] = await store.collection(CASE_TAGS).find({});
    expect(tags).toMatchObject({
      _id: ORG,
      tags: [
        { tag: 'a', cases: 1 },
        { tag: 'n', cases: 1 },
      ],
    });
    const [suite] = await store.collection<SuiteDocument>(SUITES).find({});
    expect(suite).toMatchObject({ suiteId: 's1', name: 'Suite of bat_2', lastBatchId: 'bat_2', definition: { prompt: 'p', source: null } });
  });

  it('is idempotent and deterministic: each event twice, or the log replayed again, gives the same documents', async () => {
    const once = await documents(await project(log()));
    expect(await documents(await project(log(), 2))).toEqual(once);
    const again = await project(log());
    const runner = new ProjectionRunner({} as EventStore, again, allProjections, new JsonLogger('silent'));
    for (const event of log()) await runner.handle(event);
    expect(await documents(again)).toEqual(once);
  });
});

describe('replaying a log stored before timeouts were scored and empty rates were null', () => {
  /** A trial that timed out, as it was stored then (voided), and its run's RunFinished saying passRate 0 of nothing. */
  function oldLog(): RecordedEvent[] {
    const { status: _status, ...result } = scored('run_1', 'bat_1', 'failed');
    const timedOut = { ...result, exitCode: null, timed: true, failure: 'timed out after 1000 ms', voidFields: ['harness'], serviceFault: false };
    const distribution = {
      trials: 1,
      passed: 0,
      failed: 0,
      scored: 0,
      voided: 1,
      passRate: 0,
      commandMin: 0,
      commandMedian: 0,
      commandMax: 0,
      deterministic: false,
    };
    const events: Array<[string, unknown]> = [
      ['BatchStarted', batchStarted('bat_1', 'run_1', '2025-01-01T00:01:00.000Z', definition('Old', []))],
      ['TrialVoided', timedOut],
      [
        'RunFinished',
        {
          runId: 'run_1',
          batchId: 'bat_1',
          organization: ORG,
          status: 'finished',
          failure: null,
          distribution,
          costs: emptyCosts(),
          finishedAt: '2025-01-01T00:10:00.000Z',
        },
      ],
    ];
    return recorded(events, 'o');
  }

  it("keeps the old timed-out trial void as recorded, and reads its run's rates as null", async () => {
    const store = await project(oldLog(), 2);
    const [run] = await store.collection<RunDocument>(RUNS).find({});
    expect(run.trials[0]).toMatchObject({ status: 'void', timed: true, failure: 'timed out after 1000 ms', voidFields: ['harness'] });
    expect(run.distribution).toMatchObject({ scored: 0, voided: 1, passRate: null, commandMin: null, commandMedian: null, commandMax: null });
    const [document] = await store.collection<CaseDocument>(CASES).find({});
    expect(document.variants[0].distribution).toMatchObject({ passRate: null, commandMedian: null });
  });
});

describe('the run projection: the sandbox driver that ran a run', () => {
  it('is null for trials recorded before the field existed, and the recorded driver otherwise, replayed twice alike', async () => {
    const events = log();
    const second = events.find((event) => event.type === 'TrialScored' && (event.data as { runId: string }).runId === 'run_2')!;
    second.data = { ...(second.data as object), sandboxDriver: 'process' };
    for (const times of [1, 2]) {
      const runs = await (await project(events, times)).collection<RunDocument>(RUNS).find({}, { sort: { _id: 1 } });
      expect(runs.map((run) => [run._id, run.sandbox])).toEqual([
        ['run_1', null],
        ['run_2', 'process'],
      ]);
    }
  });
});

describe('the case projection folds the runs it shows itself', () => {
  const ref = (runId: string) => ({ trialId: `${runId}-t1`, runId, batchId: runId.replace('run', 'bat'), organization: ORG });
  const command = (exitCode: number) => ({
    _tag: 'command',
    command: 'ls',
    exitCode,
    startedAtMillis: 0,
    finishedAtMillis: 1,
    output: '',
    outputTruncated: false,
  });
  const finished = {
    runId: 'run_2',
    batchId: 'bat_2',
    organization: ORG,
    status: 'finished',
    failure: null,
    costs: emptyCosts(),
    finishedAt: '2025-01-01T00:11:00.000Z',
    distribution: { trials: 1, passed: 0, failed: 1, scored: 1, voided: 0, passRate: 0, commandMin: 2, commandMedian: 2, commandMax: 2, deterministic: false },
  };

  /** log(), with the newest run's trial started and its commands recorded before its verdict, then its finish. */
  function progressLog(): RecordedEvent[] {
    const events = log();
    const verdict = events.findIndex((event) => event.type === 'TrialScored' && (event.data as { runId: string }).runId === 'run_2');
    const before: Array<[string, unknown]> = [
      ['TrialStarted', { ...ref('run_2'), startedAt: '2025-01-01T00:03:00.000Z' }],
      ['TrialCommandRecorded', { ...ref('run_2'), entry: command(0) }],
      ['TrialCommandRecorded', { ...ref('run_2'), entry: command(1) }],
    ];
    const progress = (type: string, data: unknown): RecordedEvent => ({ ...events[0], id: `p-${type}`, type, data });
    const all = [
      ...events.slice(0, verdict),
      ...before.map(([type, data]) => progress(type, data)),
      ...events.slice(verdict),
      progress('RunFinished', finished),
    ];
    return all.map((event, index) => ({ ...event, id: `${event.id}-${index}`, position: (index + 1) * 10 }));
  }

  const caseModels = async (store: MemoryReadStore) => ({
    cases: await store.collection(CASES).find({}, { sort: { _id: 1 } }),
    tags: await store.collection(CASE_TAGS).find({}, { sort: { _id: 1 } }),
  });

  it('gives the same case documents alone, before the run projection, or after it', async () => {
    const withAll = await caseModels(await project(progressLog()));
    expect(await caseModels(await project(progressLog(), 1, [caseProjection]))).toEqual(withAll);
    expect(await caseModels(await project(progressLog(), 2, [caseProjection]))).toEqual(withAll);
    expect(await caseModels(await project(progressLog(), 1, [caseProjection, runProjection]))).toEqual(withAll);
  });

  it('shows the newest run as the run projection does: its commands, its verdict and its finish', async () => {
    const alone = await project(progressLog(), 1, [caseProjection]);
    const [document] = await alone.collection<CaseDocument>(CASES).find({});
    const [run] = await (await project(progressLog(), 1, [runProjection])).collection<RunDocument>(RUNS).find({ _id: 'run_2' });
    expect(document.variants[0].lastRunId).toBe('run_2');
    expect(document.variants[0]).toMatchObject({ status: 'finished', distribution: run.distribution });
    expect(run.status).toBe('finished');
  });

  it('at a verdict, counts the commands recorded before it', async () => {
    const upToVerdict = progressLog().filter((event) => event.type !== 'RunFinished');
    const [document] = await (await project(upToVerdict, 1, [caseProjection])).collection<CaseDocument>(CASES).find({});
    expect(document.variants[0]).toMatchObject({ status: 'running', distribution: { scored: 1, failed: 1, commandMin: 2, commandMax: 2 } });
  });
});
