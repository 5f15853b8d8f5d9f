import { typedDocumentProjection } from '../../typed-projection';
import type { BatchStarted, PlannedRun, RunSetup, Trigger } from '../batches/batch.events';
import { runByRunner } from '../batches/local-runs';
import { CostRecord, emptyCosts, sumCosts } from '../trials/costs';
import { computeDistribution, Distribution, storedDistribution } from '../trials/distribution';
import { TRIAL_EVENT_TYPES, TrialEvent } from '../trials/trial.events';
import type { RunFinished } from './run.events';
import { applyTrialEvent, queuedTrial, TrialSummary } from './trial-view';

export const RUNS = 'eval_runs';

export type RunDocument = {
  _id: string;
  organization: string;
  batchId: string;
  case: { id: string; name: string };
  suite: { id: string; name: string };
  variant: { id: string; harness: string; model: string; profile: PlannedRun['variant']['profile']; sandbox: string | null; userModel: string | null };
  status: 'running' | 'finished' | 'failed';
  failure: string | null;
  startedAt: string;
  startedAtMillis: number;
  finishedAt: string | null;
  definitionHash: string;
  harnessVersion: string | null;
  /** The sandbox driver that ran the run's trials (bubblewrap or process); null until one ran. */
  sandbox: 'bubblewrap' | 'process' | null;
  profileVersion: string | null;
  local: boolean;
  costs: CostRecord;
  distribution: Distribution;
  setup: RunSetup;
  /** Summaries only: each trial's trajectory, verify steps and validations are trial detail documents. */
  trials: TrialSummary[];
  trigger: Trigger;
  tags: string[];
};

function created(data: BatchStarted['data'], run: PlannedRun): RunDocument {
  const trials = run.trialIds.map((trialId, index) => queuedTrial(trialId, index + 1));
  return {
    _id: run.runId,
    organization: data.organization,
    batchId: data.batchId,
    case: { id: run.caseId, name: run.caseName },
    suite: { id: data.suite.id, name: data.suite.name },
    variant: {
      id: run.variantId,
      harness: run.variant.harness,
      model: run.variant.model,
      profile: run.variant.profile,
      sandbox: run.variant.sandbox,
      userModel: run.userModel,
    },
    status: 'running',
    failure: null,
    startedAt: data.startedAt,
    startedAtMillis: Date.parse(data.startedAt),
    finishedAt: null,
    definitionHash: run.definitionHash,
    harnessVersion: null,
    sandbox: null,
    profileVersion: run.profileVersion,
    local: data.local === true && runByRunner(run),
    costs: emptyCosts(),
    distribution: computeDistribution(trials),
    setup: run.setup,
    trials,
    trigger: data.trigger,
    tags: run.tags,
  };
}

/**
 * Trial events change their run's trial list, and with it the run's distribution and costs. Only
 * a verdict (scored or voided) brings a trial's costs: the run's sum is redone then, not on each
 * of the trial's commands and messages.
 */
function withTrialEvent(run: RunDocument, event: TrialEvent): RunDocument {
  const trials = run.trials.map((trial) => (trial.id === event.data.trialId ? applyTrialEvent(trial, event) : trial));
  const harnessVersion = run.harnessVersion ?? (('harnessVersion' in event.data && event.data.harnessVersion) || null);
  // Documents stored before this field existed lack it: `?? null` keeps them valid.
  const sandbox = run.sandbox ?? (('sandboxDriver' in event.data && event.data.sandboxDriver) || null);
  // A document from before costs were kept on it (absent) gets them at its next event.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a stored document read back may lack the field
  const costs = COSTING_EVENTS.has(event.type) || run.costs === undefined ? runCosts(trials) : run.costs;
  return { ...run, trials, harnessVersion, sandbox, costs, distribution: computeDistribution(trials) };
}

const COSTING_EVENTS: ReadonlySet<string> = new Set<TrialEvent['type']>(['TrialScored', 'TrialVoided']);

/** The trial events that leave the run document as it is (applyTrialEvent answers the trial unchanged). */
const UNSUMMARIZED: ReadonlySet<string> = new Set<TrialEvent['type']>([
  'TrialQueued',
  'TrialMessageRecorded',
  'TrialPrepared',
  'TrialModelCalled',
  'TrialToolCalled',
  'TrialVerified',
  'TrialValidated',
]);

function runCosts(trials: TrialSummary[]): CostRecord {
  return trials.some((trial) => trial.costs) ? sumCosts(trials.flatMap((trial) => (trial.costs ? [trial.costs] : []))) : emptyCosts();
}

export const runProjection = typedDocumentProjection<BatchStarted | RunFinished | TrialEvent, RunDocument>({
  name: 'eval-runs',
  collection: RUNS,
  indexes: [
    { keys: { organization: 1, batchId: 1 } },
    { keys: { organization: 1, 'case.id': 1, 'variant.id': 1, startedAtMillis: -1, _id: -1 } },
    { keys: { organization: 1, 'case.id': 1, startedAtMillis: -1, _id: -1 } },
    { keys: { organization: 1, startedAtMillis: -1, _id: -1 } },
  ],
  eventTypes: ['BatchStarted', 'RunFinished', ...TRIAL_EVENT_TYPES],
  documentId(event) {
    if (event.type === 'BatchStarted') return event.data.runs.map((run) => run.runId);
    // A trial's queueing, messages, prepare, verify steps and validations change nothing of its summary: not read, not written.
    if (UNSUMMARIZED.has(event.type)) return null;
    return event.data.runId;
  },
  evolve(document, event, id) {
    if (event.type === 'BatchStarted') {
      const run = event.data.runs.find((candidate) => candidate.runId === id);
      if (!run) throw new Error(`Batch "${event.data.batchId}" plans no run "${id}".`);
      return created(event.data, run);
    }
    if (!document) return null;
    if (event.type === 'RunFinished') {
      const { data } = event;
      return {
        ...document,
        status: data.status,
        failure: data.failure,
        finishedAt: data.finishedAt,
        distribution: storedDistribution(data.distribution),
        costs: data.costs,
      };
    }
    return withTrialEvent(document, event);
  },
});
