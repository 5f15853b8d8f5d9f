import { EventMetadata, EventStore, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { derivedEventId } from '#shared/ids';
import { batchSlotsDecider, batchSlotsStream } from '../batches/batch-slots.decider';
import { trialStream } from '../trials/trial.events';
import { loadRunnerBatch, RunnerBatch } from './runner-batch';
import { runnerVoid, unreportedTrials } from './runner-decisions';
import { RunnerEvent, runnerStream } from './runner.events';

/** Attempts when a report or a lease races the same trial: each retry re-reads the batch. */
const ATTEMPTS = 5;

/**
 * Appends one event to the runner stream at the revision the batch was read at; answers false
 * when the stream moved (a beat, or another server's decision came first).
 */
export async function appendRunnerEvent(eventStore: EventStore, batch: RunnerBatch, event: RunnerEvent, metadata: EventMetadata): Promise<boolean> {
  const stream = runnerStream(batch.started.batchId);
  const expected = batch.runnerRevision < 0 ? 'no_stream' : batch.runnerRevision;
  try {
    await eventStore.append(stream, [{ id: derivedEventId(stream, String(expected), event.type), ...event, metadata }], expected);
    return true;
  } catch (error) {
    if (error instanceof WrongExpectedVersion) return false;
    throw error;
  }
}

/**
 * Voids every trial of the runner's runs that has no verdict yet (`failure`, or the lease's
 * expiry), each at the revision it was read at; a trial a report reached first keeps that report.
 */
export async function voidUnreported(
  eventStore: EventStore,
  batchId: string,
  failure: string,
  now: Date,
  options: { leaseMs: number; metadata: EventMetadata },
): Promise<number> {
  let voided = 0;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const batch = await loadRunnerBatch(eventStore, batchId);
    if (!batch) return voided;
    const pending = unreportedTrials(batch, failure, now, options.leaseMs);
    if (pending.length === 0) return voided;
    for (const { trial, failure: why } of pending) {
      const stream = trialStream(trial.trialId);
      const expected = trial.revision < 0 ? 'no_stream' : trial.revision;
      const event = runnerVoid(batch, trial, why, now);
      try {
        await eventStore.append(stream, [{ id: derivedEventId(stream, String(expected), event.type), ...event, metadata: options.metadata }], expected);
        voided += 1;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersion)) throw error;
      }
    }
  }
  return voided;
}

/** Gives the batch's slot back at once (the saga's own release at its end then does nothing). */
export async function releaseRunnerSlot(eventStore: EventStore, batch: RunnerBatch, reason: string, now: Date, metadata: EventMetadata): Promise<void> {
  const { organization, batchId } = batch.started;
  await executeOnStream(eventStore, batchSlotsStream(organization), batchSlotsDecider, { type: 'ReleaseSlot', organization, batchId, reason, now }, metadata, {
    attempts: 50,
  });
}
