import { evolveGuarded } from '#infrastructure/processing/projection';
import type { Collection, Document, ReadStore } from '#infrastructure/read-store/read-store.port';
import { typedProjection, Recorded } from '../typed-projection';
import type { BatchStarted } from '../evals/batches/batch.events';
import type { TrialCommandRecorded, TrialScored, TrialVoided } from '../evals/trials/trial.events';
import { AnalyticsRunDocument, ANALYTICS_RUNS, ANALYTICS_TALLIES, CASE_HISTORIES, seriesOf, TallyDocument, TallyScope } from './analytics-documents';
import { BUCKETS, bucketStart, BucketSize } from './buckets';
import { emptyTally, RunCounts, VerdictDelta, withVerdict } from './tally';
import { variantKey, variantSummary } from './variant-key';
import { merged } from '#shared/merged';

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
    await evolveGuarded(runs, document._id, (current) => (current && current._position >= event.position ? undefined : document));
  }
}

async function onCommand(event: Recorded<TrialCommandRecorded>, store: ReadStore): Promise<void> {
  await evolveDocument(store.collection<AnalyticsRunDocument>(ANALYTICS_RUNS), event.data.runId, (run) => {
    const trial = run?.trials[event.data.trialId];
    if (!run || !trial || run._position >= event.position) return undefined;
    const trials = { ...run.trials, [event.data.trialId]: { ...trial, commands: trial.commands + 1 } };
    return { ...run, trials, _position: event.position };
  });
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
  const status = event.type === 'TrialVoided' ? 'void' : event.data.status;
  const counted: { after?: AnalyticsRunDocument; delta?: VerdictDelta } = {};
  await evolveDocument(store.collection<AnalyticsRunDocument>(ANALYTICS_RUNS), event.data.runId, (run) => {
    const trial = run?.trials[event.data.trialId];
    if (!run || !trial) return undefined;
    let after: AnalyticsRunDocument = run;
    if (run._position < event.position) {
      // A second verdict for a trial (never written by the saga) would count it twice: ignored.
      if (trial.status !== 'pending') return undefined;
      after = {
        ...run,
        trials: { ...run.trials, [event.data.trialId]: { ...trial, status } },
        counts: countsWith(run.counts, status, 1),
        _position: event.position,
      };
    } else if (trial.status !== status) return undefined;
    const delta: VerdictDelta = {
      status,
      commands: trial.commands,
      modelMs: event.data.modelMs,
      costs: event.data.costs,
      run: { before: countsWith(after.counts, status, -1), after: after.counts },
    };
    counted.after = after;
    counted.delta = delta;
    return run._position < event.position ? { ...after, tally: withVerdict(run.tally, delta) } : undefined;
  });
  const { after, delta } = counted;
  if (after === undefined || delta === undefined) return;
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
  await evolveDocument(store.collection<TallyDocument>(ANALYTICS_TALLIES), target._id, (current) => {
    if (current && current._position >= position) return undefined;
    const { _id: _ignored, _position: _previous, ...fields } = current ?? merged(target, emptyTally(), { _position: -1 });
    const tally = withVerdict(fields, delta);
    // The variant's first profile name stays: the summary is the definition's, fixed at first sight.
    return merged(target, tally, { variant: current?.variant ?? target.variant, _id: target._id, _position: position });
  });
}

/**
 * Writes what `next` makes of the stored document (undefined: nothing to write), guarded by the
 * position it read (evolveGuarded): a lapsed owner's late write cannot undo a newer document.
 */
async function evolveDocument<T extends Document & { _position: number }>(
  collection: Collection<T>,
  id: string,
  next: (current: T | null) => T | undefined,
): Promise<void> {
  await evolveGuarded(collection, id, next);
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
