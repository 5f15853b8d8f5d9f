import type { RecordedEvent } from '../../../infrastructure/event-store/event-store.port';
import { documentProjection } from '../../../infrastructure/processing/projection';
import type { TrialScored, TrialVoided } from '../trials/trial.events';
import type { BatchFailed, BatchFinished, BatchStarted, Trigger } from './batch.events';

export const BATCHES = 'eval_batches';

/** The batch summary, plus what the full form needs to gather its runs. */
export type BatchDocument = {
  _id: string;
  organization: string;
  status: 'running' | 'finished' | 'failed';
  startedAt: string;
  startedAtMillis: number;
  finishedAt: string | null;
  failure: string | null;
  local: boolean;
  trigger: Trigger;
  suiteId: string;
  /** The suite's name as started: the `name` of the batch list's cursor. */
  suiteName: string;
  runIds: string[];
  cases: number;
  runs: number;
  trials: number;
  scored: number;
  passed: number;
  voided: number;
  /** The trials already counted, so a trial's verdict is counted once. */
  judged: string[];
};

function started(data: BatchStarted['data']): BatchDocument {
  return {
    _id: data.batchId,
    organization: data.organization,
    status: 'running',
    startedAt: data.startedAt,
    startedAtMillis: Date.parse(data.startedAt),
    finishedAt: null,
    failure: null,
    local: false,
    trigger: data.trigger,
    suiteId: data.suite.id,
    suiteName: data.suite.name,
    runIds: data.runs.map((run) => run.runId),
    cases: data.cases.length,
    runs: data.runs.length,
    trials: data.runs.length * data.trials,
    scored: 0,
    passed: 0,
    voided: 0,
    judged: [],
  };
}

function judged(batch: BatchDocument, event: TrialScored | TrialVoided): BatchDocument {
  if (batch.judged.includes(event.data.trialId)) return batch;
  const passed = event.type === 'TrialScored' && event.data.status === 'passed' ? 1 : 0;
  const scored = event.type === 'TrialScored' ? 1 : 0;
  const voided = event.type === 'TrialVoided' ? 1 : 0;
  return {
    ...batch,
    scored: batch.scored + scored,
    passed: batch.passed + passed,
    voided: batch.voided + voided,
    judged: [...batch.judged, event.data.trialId],
  };
}

export const batchProjection = documentProjection<BatchDocument>({
  name: 'eval-batches',
  collection: BATCHES,
  indexes: [{ keys: { organization: 1, startedAtMillis: -1, _id: -1 } }, { keys: { organization: 1, status: 1 } }],
  eventTypes: ['BatchStarted', 'BatchFinished', 'BatchFailed', 'TrialScored', 'TrialVoided'],
  documentId: (event: RecordedEvent) => (event.data as { batchId: string }).batchId,
  evolve(document, event) {
    switch (event.type) {
      case 'BatchStarted':
        return started(event.data as BatchStarted['data']);
      case 'BatchFinished':
        return document && { ...document, status: 'finished', finishedAt: (event.data as BatchFinished['data']).finishedAt };
      case 'BatchFailed': {
        const data = event.data as BatchFailed['data'];
        return document && { ...document, status: 'failed', finishedAt: data.finishedAt, failure: data.failure };
      }
      default:
        return document && judged(document, event as unknown as TrialScored | TrialVoided);
    }
  },
});
