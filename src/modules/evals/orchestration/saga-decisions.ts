import type { BatchFailed, BatchFinished, BatchStarted, PlannedRun } from '../batches/batch.events';
import type { RunFinished } from '../runs/run.events';
import { sumCosts } from '../trials/costs';
import { computeDistribution } from '../trials/distribution';
import type { TrialEvent, TrialRef } from '../trials/trial.events';
import { oneLine, resultOf } from '../trials/trial-decisions';
import type { SagaBatch, SagaRun, SagaTrial } from './saga-state';
import { TrialOutcome, voidOutcome } from '#trial-runner';
import { merged } from '#shared/merged';

/**
 * Pure decisions of the saga about batches, runs and a trial its instance could not run. What
 * a trial is asked to do and what its outcome records, which the runner endpoints and rescoring
 * need too, are in trials/trial-decisions.ts. The time arrives as `now`, so a decision depends on
 * its arguments only.
 */

/** Why a trial is void whose server instance stopped (it said so as it stopped, or its claim lapsed). */
export const ABANDONED = 'abandoned: the instance running this trial stopped';

export function hasSimulatedUser(batch: SagaBatch, run: SagaRun): boolean {
  return batch.started.cases.find((candidate) => candidate.id === run.run.caseId)?.user?.kind === 'simulated';
}

export function serviceFaultOutcome(error: Error): TrialOutcome {
  return voidOutcome({ failure: oneLine(`the service failed to run this trial: ${error.message}`), voidFields: [], serviceFault: true });
}

/** A trial a stopped instance was running: void, and counted as executed (not a service fault). */
export function abandonedTrial(ref: TrialRef, run: PlannedRun, now: Date): TrialEvent {
  const costInput = { harness: run.variant.harness, model: run.variant.model, sandbox: run.variant.sandbox, usage: null, hasSimulatedUser: false };
  const result = resultOf(voidOutcome({ failure: ABANDONED, voidFields: [], serviceFault: false }), costInput, now);
  return { type: 'TrialVoided', data: merged(ref, result, { failure: ABANDONED, voidFields: [], serviceFault: false }) };
}

/** A run is `failed` only when every one of its trials errored inside the service itself. */
export function runFinished(batch: BatchStarted['data'], run: SagaRun, trials: SagaTrial[], now: Date): RunFinished {
  const failed = trials.length > 0 && trials.every((trial) => trial.serviceFault);
  return {
    type: 'RunFinished',
    data: {
      runId: run.run.runId,
      batchId: batch.batchId,
      organization: batch.organization,
      status: failed ? 'failed' : 'finished',
      failure: failed ? (trials[0].failure ?? 'the service could not run this run') : null,
      distribution: computeDistribution(trials.map((trial) => ({ status: trial.status, commands: trial.commands }))),
      costs: sumCosts(trials.flatMap((trial) => (trial.costs ? [trial.costs] : []))),
      finishedAt: now.toISOString(),
    },
  };
}

/** A batch is `failed` when one of its runs failed: "K of N runs could not run: REASON". */
export function batchEnding(batch: BatchStarted['data'], runs: SagaRun[], now: Date): BatchFinished | BatchFailed {
  const failed = runs.filter((run) => run.failed);
  const finishedAt = now.toISOString();
  const { batchId, organization } = batch;
  if (failed.length === 0) return { type: 'BatchFinished', data: { batchId, organization, finishedAt } };
  const failure = `${failed.length} of ${runs.length} runs could not run: ${failed[0].failure ?? 'unknown reason'}`;
  return { type: 'BatchFailed', data: { batchId, organization, finishedAt, failure } };
}
