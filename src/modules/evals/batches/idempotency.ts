import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { Decider } from '#shared/decider';
import { BadRequest } from '#shared/errors';
import { sha256Hex } from '#shared/hash';

export type IdempotencyKeyClaimed = DomainEvent<'IdempotencyKeyClaimed', { organization: string; batchId: string; requestHash: string; claimedAt: string }>;
export type IdempotencyKeyReleased = DomainEvent<'IdempotencyKeyReleased', { organization: string; batchId: string; reason: string }>;
export type IdempotencyEvent = IdempotencyKeyClaimed | IdempotencyKeyReleased;

export const idempotencyStream = (organization: string, key: string) => `idempotency-${organization}.${sha256Hex(key).slice(0, 40)}`;

export type IdempotencyState = { batchId: string; requestHash: string } | null;

export type IdempotencyCommand =
  | { type: 'Claim'; organization: string; batchId: string; requestHash: string; now: Date }
  | { type: 'Release'; organization: string; batchId: string; reason: string };

/**
 * One start per idempotency key: the first claim wins; a claim with the same body finds the
 * original batch; another body is refused. A start that did not happen releases its claim.
 */
export const idempotencyDecider: Decider<IdempotencyCommand, IdempotencyState, IdempotencyEvent> = {
  initialState: null,
  evolve: (_state, event) => (event.type === 'IdempotencyKeyClaimed' ? { batchId: event.data.batchId, requestHash: event.data.requestHash } : null),
  decide(command, state) {
    if (command.type === 'Release') {
      return state?.batchId === command.batchId
        ? [{ type: 'IdempotencyKeyReleased', data: { organization: command.organization, batchId: command.batchId, reason: command.reason } }]
        : [];
    }
    if (state === null) {
      const { organization, batchId, requestHash } = command;
      return [{ type: 'IdempotencyKeyClaimed', data: { organization, batchId, requestHash, claimedAt: command.now.toISOString() } }];
    }
    if (state.requestHash !== command.requestHash) {
      throw new BadRequest('This idempotency-key was already used with a different body. Use a new key for a different start.');
    }
    return [];
  },
};

const KEY_PATTERN = /^[\x21-\x7e]{1,128}$/;

/** The optional `idempotency-key` header: 1 to 128 visible ASCII characters. */
export function readIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header[0] : header;
  if (!KEY_PATTERN.test(value)) {
    throw new BadRequest('The idempotency-key header must be 1 to 128 visible ASCII characters.');
  }
  return value;
}
