import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { Decider } from '#shared/decider';
import { Conflict } from '#shared/errors';

export const RUNNING_BATCHES_PER_ORGANIZATION = 3;

/** `idempotencyKey`: the start's key, if it had one, so that whoever releases an unstarted slot releases the key too. */
export type BatchSlotTaken = DomainEvent<'BatchSlotTaken', { organization: string; batchId: string; takenAt: string; idempotencyKey?: string }>;
export type BatchSlotReleased = DomainEvent<'BatchSlotReleased', { organization: string; batchId: string; releasedAt: string; reason: string }>;
export type BatchSlotEvent = BatchSlotTaken | BatchSlotReleased;

export type BatchSlotCommand =
  | { type: 'TakeSlot'; organization: string; batchId: string; now: Date; idempotencyKey?: string | null }
  | { type: 'ReleaseSlot'; organization: string; batchId: string; reason: string; now: Date };

/** A slot and the start that took it. */
export interface HeldSlot {
  batchId: string;
  takenAtMs: number;
  idempotencyKey: string | null;
}

/** The slots held, oldest first. */
export type BatchSlotState = readonly HeldSlot[];

export const batchSlotsStream = (organization: string) => `batchslots-${organization}`;

/**
 * The rule of three, enforced on one stream with its expected revision: two starts that read
 * the same state cannot both append, so concurrent starts never admit a fourth batch.
 */
export const batchSlotsDecider: Decider<BatchSlotCommand, BatchSlotState, BatchSlotEvent> = {
  initialState: [],
  evolve(state, event) {
    if (event.type === 'BatchSlotTaken') {
      const { batchId, takenAt, idempotencyKey } = event.data;
      return [...state, { batchId, takenAtMs: Date.parse(takenAt), idempotencyKey: idempotencyKey ?? null }];
    }
    return state.filter((slot) => slot.batchId !== event.data.batchId);
  },
  decide(command, state) {
    const holds = state.some((slot) => slot.batchId === command.batchId);
    const { organization, batchId } = command;
    if (command.type === 'ReleaseSlot') {
      if (!holds) return [];
      return [{ type: 'BatchSlotReleased', data: { organization, batchId, releasedAt: command.now.toISOString(), reason: command.reason } }];
    }
    if (holds) return [];
    if (state.length >= RUNNING_BATCHES_PER_ORGANIZATION) {
      throw new Conflict(
        `This organization already has ${state.length} batches running, and may have ${RUNNING_BATCHES_PER_ORGANIZATION} at once. Wait for one to finish.`,
        'rule_of_three',
      );
    }
    const key = command.idempotencyKey ? { idempotencyKey: command.idempotencyKey } : {};
    return [{ type: 'BatchSlotTaken', data: { organization, batchId, takenAt: command.now.toISOString(), ...key } }];
  },
};
