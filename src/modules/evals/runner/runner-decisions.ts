import { voidOutcome } from '#trial-runner';
import { trialResultEvents } from '../trials/trial-decisions';
import type { TrialEvent, TrialRef, TrialVoided } from '../trials/trial.events';
import type { LocalTrial, RunnerBatch, TrialLease } from './runner-batch';
import { LEASE_EXPIRED_FAILURE, TrialLeased } from './runner.events';

/**
 * Pure decisions of the runner endpoints and the silence watch: times arrive as arguments,
 * so each answer depends on the stored events and `now` only.
 */

/**
 * When a lease ends: `leaseMs` after the last beat made while it was still held. A beat after
 * it expired revives nothing, so a runner that slept past its lease cannot report that trial.
 */
export function leaseExpiry(batch: RunnerBatch, lease: TrialLease, leaseMs: number): number {
  let expires = lease.expiresAtMs;
  for (const beat of batch.beats) {
    if (beat >= lease.leasedAtMs && beat <= expires) expires = Math.max(expires, beat + leaseMs);
  }
  return expires;
}

export function trialRef(batch: RunnerBatch, trial: LocalTrial): TrialRef {
  return { trialId: trial.trialId, runId: trial.run.runId, batchId: batch.started.batchId, organization: batch.started.organization };
}

/** The queued trials a lease of `max` hands out, in the batch's run order. */
export function leasableTrials(batch: RunnerBatch, max: number): LocalTrial[] {
  return [...batch.trials.values()].filter((trial) => trial.status === 'queued').slice(0, max);
}

/** The trials no runner holds yet and no verdict ended: what a runner may still lease. */
export function remainingTrials(batch: RunnerBatch): number {
  return [...batch.trials.values()].filter((trial) => trial.status === 'planned' || trial.status === 'queued').length;
}

/** Leasing starts the trial: TrialStarted, then the lease. */
export function leaseEvents(batch: RunnerBatch, trial: LocalTrial, leaseId: string, now: Date, leaseMs: number): Array<TrialEvent | TrialLeased> {
  const ref = trialRef(batch, trial);
  const at = now.toISOString();
  const expiresAt = new Date(now.getTime() + leaseMs).toISOString();
  return [
    { type: 'TrialStarted', data: { ...ref, startedAt: at } },
    { type: 'TrialLeased', data: { ...ref, leaseId, leasedAt: at, expiresAt } },
  ];
}

/** A trial the runner will not report, void as a server trial would be (same result fields and costs). */
export function runnerVoid(batch: RunnerBatch, trial: LocalTrial, failure: string, now: Date): TrialVoided {
  const variant = trial.run.variant;
  const costInput = { harness: variant.harness, model: variant.model, sandbox: variant.sandbox, usage: null, hasSimulatedUser: false };
  const outcome = voidOutcome({ failure, voidFields: [], serviceFault: false });
  const [voided] = trialResultEvents(trialRef(batch, trial), outcome, costInput, now);
  return voided as TrialVoided;
}

/** Every trial without a verdict, with why it is void: its lease expired, else `failure`. */
export function unreportedTrials(batch: RunnerBatch, failure: string, now: Date, leaseMs: number): Array<{ trial: LocalTrial; failure: string }> {
  return [...batch.trials.values()]
    .filter((trial) => trial.status !== 'done')
    .map((trial) => {
      const expired = trial.lease !== null && leaseExpiry(batch, trial.lease, leaseMs) < now.getTime();
      return { trial, failure: expired ? LEASE_EXPIRED_FAILURE : failure };
    });
}

/**
 * A runner is silent when nothing came from it (beat, lease, report) for `silenceMs` while one
 * of its trials has no verdict. A batch started with checksIn promised beats, so silence alone
 * ends it; one without may run a trial quietly for as long as the trial's lease holds.
 */
export function isSilent(batch: RunnerBatch, now: Date, timings: { silenceMs: number; leaseMs: number }): boolean {
  if (!batch.local || batch.ended || batch.runner !== 'running') return false;
  const unfinished = [...batch.trials.values()].filter((trial) => trial.status !== 'done');
  if (unfinished.length === 0 || now.getTime() - batch.lastSignalMs <= timings.silenceMs) return false;
  if (batch.started.checksIn) return true;
  return unfinished.every((trial) => trial.lease === null || leaseExpiry(batch, trial.lease, timings.leaseMs) < now.getTime());
}
