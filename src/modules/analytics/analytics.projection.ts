import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { typedProjection, Recorded } from '../typed-projection';
import type { BatchStarted } from '../evals/batches/batch.events';
import type { TrialCommandRecorded, TrialScored, TrialVoided } from '../evals/trials/trial.events';
import { AnalyticsRunDocument, ANALYTICS_RUNS, ANALYTICS_TALLIES, CASE_HISTORIES, seriesOf, TallyDocument, TallyScope } from './analytics-documents';
import { BUCKETS, bucketStart, BucketSize } from './buckets';
import { emptyTally, RunCounts, VerdictDelta, withVerdict } from './tally';
import { variantKey, variantSummary } from './variant-key';

type AnalyticsEvent = BatchStarted | TrialCommandRecorded | TrialScored | TrialVoided;

function runDocuments(event: Recorded<BatchStarted>): AnalyticsRunDocument[] {
  const { data } = event;
  const startedAtMillis = Date.parse(data.startedAt);
  return data.runs.map((run) => ({
    _id: run.runId,
    organization: data.organization,
    batchId: data.batchId,
    suiteId: data.suite.id,
    caseId: run.caseId,
    caseName: run.caseName,
    variantKey: variantKey(run.variant),
    variant: variantSummary(run.variant),
    startedAtMillis,
    trials: Object.fromEntries(run.trialIds.map((trialId) => [trialId, { commands: 0, status: 'pending' as const }])),
    counts: { verdicts: 0, passed: 0, failed: 0 },
    tally: emptyTally(),
    _position: event.position,
  }));
}

async function onBatchStarted(event: Recorded<BatchStarted>, store: ReadStore): Promise<void> {
  const runs = store.collection<AnalyticsRunDocument>(ANALYTICS_RUNS);
  for (const document of runDocuments(event)) {
    const current = await runs.findOne({ _id: document._id });
    if (current && current._position >= event.position) continue;
    await runs.replaceOne({ _id: document._id }, document, { upsert: true });
  }
}

async function onCommand(event: Recorded<TrialCommandRecorded>, store: ReadStore): Promise<void> {
  const runs = store.collection<AnalyticsRunDocument>(ANALYTICS_RUNS);
  const run = await runs.findOne({ _id: event.data.runId });
  const trial = run?.trials[event.data.trialId];
  if (!run || !trial || run._position >= event.position) return;
  const trials = { ...run.trials, [event.data.trialId]: { ...trial, commands: trial.commands + 1 } };
  await runs.replaceOne({ _id: run._id }, { ...run, trials, _position: event.position });
}

function countsWith(counts: RunCounts, status: 'passed' | 'failed' | 'void', sign: 1 | -1): RunCounts {
  return {
    verdicts: counts.verdicts + sign,
    passed: counts.passed + (status === 'passed' ? sign : 0),
    failed: counts.failed + (status === 'failed' ? sign : 0),
  };
}

/**
 * A verdict updates the run's document, then every tally it counts in. Each document is guarded
 * by its own position: after a crash between two writes, the redelivered event updates only the
 * documents it had not reached, with the run's counts as they stood right after it.
 */
async function onVerdict(event: Recorded<TrialScored | TrialVoided>, store: ReadStore): Promise<void> {
  const runs = store.collection<AnalyticsRunDocument>(ANALYTICS_RUNS);
  const run = await runs.findOne({ _id: event.data.runId });
  const trial = run?.trials[event.data.trialId];
  if (!run || !trial) return;
  const status = event.type === 'TrialVoided' ? 'void' : event.data.status;
  let after: AnalyticsRunDocument = run;
  if (run._position < event.position) {
    // A second verdict for a trial (never written by the saga) would count it twice: ignored.
    if (trial.status !== 'pending') return;
    after = {
      ...run,
      trials: { ...run.trials, [event.data.trialId]: { ...trial, status } },
      counts: countsWith(run.counts, status, 1),
      _position: event.position,
    };
  } else if (run.trials[event.data.trialId].status !== status) return;
  const delta: VerdictDelta = {
    status,
    commands: trial.commands,
    modelMs: event.data.modelMs,
    costs: event.data.costs,
    run: { before: countsWith(after.counts, status, -1), after: after.counts },
  };
  if (run._position < event.position) await runs.replaceOne({ _id: run._id }, { ...after, tally: withVerdict(run.tally, delta) });
  for (const target of tallyTargets(after)) await applyToTally(store, target, delta, event.position);
}

type TallyTarget = Omit<TallyDocument, keyof ReturnType<typeof emptyTally> | '_position'>;

/** The documents a run's trials count in: 3 scopes × 3 bucket sizes, and the case's whole history. */
function tallyTargets(run: AnalyticsRunDocument): TallyTarget[] {
  const targets: TallyTarget[] = [];
  const add = (scope: TallyScope, bucket: BucketSize | 'all') => {
    const bucketStartMillis = bucket === 'all' ? 0 : bucketStart(run.startedAtMillis, bucket);
    const suiteId = scope === 'organization' ? null : run.suiteId;
    const caseId = scope === 'case' ? run.caseId : null;
    // A case's whole-history documents share one series, so flakiness lists them all at once.
    const series = bucket === 'all' ? CASE_HISTORIES : seriesOf(scope, scope === 'case' ? run.caseId : suiteId, bucket);
    targets.push({
      _id: [run.organization, series, suiteId ?? '', caseId ?? '', bucketStartMillis, run.variantKey].join('\u0000'),
      organization: run.organization,
      scope,
      series,
      suiteId,
      caseId,
      caseName: scope === 'case' ? run.caseName : null,
      bucket,
      bucketStartMillis,
      variantKey: run.variantKey,
      variant: run.variant,
      caseSet: scope === 'case' && bucket === 'all' ? run.suiteId : null,
    });
  };
  for (const scope of ['organization', 'suite', 'case'] as const) for (const bucket of BUCKETS) add(scope, bucket);
  add('case', 'all');
  return targets;
}

async function applyToTally(store: ReadStore, target: TallyTarget, delta: VerdictDelta, position: number): Promise<void> {
  const tallies = store.collection<TallyDocument>(ANALYTICS_TALLIES);
  const current = await tallies.findOne({ _id: target._id });
  if (current && current._position >= position) return;
  const { _id: _ignored, _position: _previous, ...fields } = current ?? { ...target, ...emptyTally(), _position: -1 };
  const tally = withVerdict(fields, delta);
  // The variant's first profile name stays: the summary is the definition's, fixed at first sight.
  await tallies.replaceOne(
    { _id: target._id },
    { ...target, ...tally, variant: current?.variant ?? target.variant, _id: target._id, _position: position },
    { upsert: true },
  );
}

/**
 * Pass rates, comparisons and flakiness, kept up to date from the trials' verdicts: per run, and
 * per variant definition in time buckets and per case, so a query reads a few aggregates and
 * never the trials.
 */
export const analyticsProjection = typedProjection<AnalyticsEvent>({
  name: 'analytics',
  eventTypes: ['BatchStarted', 'TrialCommandRecorded', 'TrialScored', 'TrialVoided'],
  collections: {
    [ANALYTICS_RUNS]: [{ keys: { organization: 1, batchId: 1 } }],
    [ANALYTICS_TALLIES]: [{ keys: { organization: 1, series: 1, bucketStartMillis: 1 } }, { keys: { organization: 1, caseSet: 1 } }],
  },
  async project(event, store) {
    switch (event.type) {
      case 'BatchStarted':
        return onBatchStarted(event, store);
      case 'TrialCommandRecorded':
        return onCommand(event, store);
      case 'TrialScored':
      case 'TrialVoided':
        return onVerdict(event, store);
    }
  },
});
