import type { EventStore } from '#infrastructure/event-store/event-store.port';
import type { ModelReplay } from '#shared/eval-definitions';
import type { ReplaySource } from '#trial-runner';
import { batchStream } from '../batches/batch.events';
import type { BatchStarted } from '../batches/batch.events';
import { TrialModelCalled, trialStream } from '../trials/trial.events';

/**
 * The recorded model calls of a batch, for a variant that replays it: every call of its trials
 * whose bodies were recorded (gateway.recordBodies), read from their streams, in trial order. A
 * batch of another organization, or none, gives no call (a strict replay then voids its trials,
 * naming the call it could not answer).
 */
export async function replaySource(eventStore: EventStore, organization: string, replay: ModelReplay): Promise<ReplaySource> {
  const source: ReplaySource = { batchId: replay.batchId, mode: replay.mode, calls: [] };
  const first = (await eventStore.readStream(batchStream(replay.batchId), { maxCount: 1 })).at(0);
  if (first?.type !== 'BatchStarted') return source;
  const started = (first as unknown as BatchStarted).data;
  if (started.organization !== organization) return source;
  for (const trialId of started.runs.flatMap((run) => run.trialIds)) {
    for (const event of await eventStore.readStream(trialStream(trialId))) {
      if (event.type !== 'TrialModelCalled') continue;
      const { entry, bodies } = event.data as TrialModelCalled['data'];
      if (bodies) source.calls.push({ ...entry, request: bodies.request, response: bodies.response });
    }
  }
  return source;
}
