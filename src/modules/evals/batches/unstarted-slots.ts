import { EventMetadata, EventStore, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { derivedEventId } from '#shared/ids';
import { BatchSlotState, batchSlotsDecider, batchSlotsStream, HeldSlot } from './batch-slots.decider';
import { BatchStartAbandoned, batchStream } from './batch.events';
import { idempotencyDecider, idempotencyStream } from './idempotency';

/** The reason on the BatchSlotReleased (and the key's release) of a start that did not complete. */
export const START_NOT_COMPLETED = 'start-not-completed';

/** Attempts on the slots stream, where concurrent starts contend. */
const SLOT_ATTEMPTS = 50;

/** The slots of `state` taken longer than `holdMs` before `now`: their starts may have died. */
export function overdueSlots(state: BatchSlotState, now: Date, holdMs: number): HeldSlot[] {
  return state.filter((slot) => slot.takenAtMs + holdMs <= now.getTime());
}

/**
 * Gives back the slot of a batch whose start took it and did not record BatchStarted: the
 * process died between the two, which no transaction spans on EventStoreDB. It first closes the
 * batch's stream with BatchStartAbandoned, appended to `no_stream`: of that and the start's own
 * BatchStarted (also to `no_stream`) exactly one is stored. When the batch started, nothing is
 * released; when it is abandoned (here or by another instance that died before releasing),
 * the start's idempotency key and then its slot are released, both idempotently, so a crash
 * between any two steps is finished by the next caller. Answers whether the slot was the
 * abandoned start's to release.
 */
export async function releaseUnstartedSlot(eventStore: EventStore, organization: string, slot: HeldSlot, now: Date, metadata: EventMetadata): Promise<boolean> {
  const stream = batchStream(slot.batchId);
  const abandoned: BatchStartAbandoned = {
    type: 'BatchStartAbandoned',
    data: { batchId: slot.batchId, organization, abandonedAt: now.toISOString(), reason: START_NOT_COMPLETED },
  };
  try {
    await eventStore.append(stream, [{ id: derivedEventId(stream, 'abandoned', '0'), ...abandoned, metadata }], 'no_stream');
  } catch (error) {
    if (!(error instanceof WrongExpectedVersion)) throw error;
    const first = (await eventStore.readStream(stream, { maxCount: 1 })).at(0);
    if (first?.type !== 'BatchStartAbandoned') return false;
  }
  if (slot.idempotencyKey !== null) {
    const command = { type: 'Release' as const, organization, batchId: slot.batchId, reason: START_NOT_COMPLETED };
    await executeOnStream(eventStore, idempotencyStream(organization, slot.idempotencyKey), idempotencyDecider, command, metadata);
  }
  const release = { type: 'ReleaseSlot' as const, organization, batchId: slot.batchId, reason: START_NOT_COMPLETED, now };
  await executeOnStream(eventStore, batchSlotsStream(organization), batchSlotsDecider, release, metadata, { attempts: SLOT_ATTEMPTS });
  return true;
}
