import { typedDocumentProjection } from '../../typed-projection';
import type { TrialScored, TrialVoided } from '../trials/trial.events';
import type { BatchEvent, BatchStarted, Trigger } from './batch.events';

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
    local: data.local === true,
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

/** A verdict: `passed`/`failed` for a scored trial, `void` for a voided one. */
function judged(batch: BatchDocument, trialId: string, verdict: TrialScored['data']['status'] | 'void'): BatchDocument {
  if (batch.judged.includes(trialId)) return batch;
  const passed = verdict === 'passed' ? 1 : 0;
  const scored = verdict === 'void' ? 0 : 1;
  const voided = verdict === 'void' ? 1 : 0;
  return {
    ...batch,
    scored: batch.scored + scored,
    passed: batch.passed + passed,
    voided: batch.voided + voided,
    judged: [...batch.judged, trialId],
  };
}

export const batchProjection = typedDocumentProjection<BatchEvent | TrialScored | TrialVoided, BatchDocument>({
  name: 'eval-batches',
  collection: BATCHES,
  indexes: [
    { keys: { organization: 1, startedAtMillis: -1, _id: -1 } },
    // A suite's batches, newest first (evals.batches.list {suite}).
    { keys: { organization: 1, suiteId: 1, startedAtMillis: -1, _id: -1 } },
    { keys: { organization: 1, status: 1 } },
  ],
  eventTypes: ['BatchStarted', 'BatchFinished', 'BatchFailed', 'TrialScored', 'TrialVoided'],
  documentId: (event) => event.data.batchId,
  evolve(document, event) {
    switch (event.type) {
      case 'BatchStarted':
        return started(event.data);
      case 'BatchFinished':
        return document && { ...document, status: 'finished', finishedAt: event.data.finishedAt };
      case 'BatchFailed':
        return document && { ...document, status: 'failed', finishedAt: event.data.finishedAt, failure: event.data.failure };
      case 'TrialScored':
        return document && judged(document, event.data.trialId, event.data.status);
      case 'TrialVoided':
        return document && judged(document, event.data.trialId, 'void');
    }
  },
});
