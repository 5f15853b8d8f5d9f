import type { AuditedEvent } from '#infrastructure/event-store/event-store.port';
import { eventHash } from '#shared/event-chain';

export interface ChainBreak {
  position: number;
  stream: string;
  revision: number;
  reason: string;
}

/** The walk so far: the last hash seen (undefined before the chain began). */
export interface ChainWalk {
  lastHash: string | undefined;
  checked: number;
  /** Events stored before the chain began: they carry no hash, so nothing can vouch for them. */
  unchained: number;
  firstBreak: ChainBreak | null;
}

export const CHAIN_WALK_START: ChainWalk = { lastHash: undefined, checked: 0, unchained: 0, firstBreak: null };

/**
 * One step of `audit.verify`: the organization's events in position order, each checked against
 * the one before it. The chain begins at the first event with a hash; from there on, every event
 * must have one, name its predecessor's hash, and hash to what it holds.
 */
export function walkChain(walk: ChainWalk, event: AuditedEvent): ChainWalk {
  if (walk.firstBreak) return walk;
  const at = { position: event.position, stream: event.streamName, revision: event.revision };
  if (event.chain === null) {
    if (walk.lastHash === undefined) return { ...walk, unchained: walk.unchained + 1 };
    return {
      ...walk,
      firstBreak: { ...at, reason: 'The event has no hash although the events before it have: it was inserted, or its hash removed, after it was stored.' },
    };
  }
  const expectedPrevious = walk.lastHash ?? null;
  if (event.chain.prevHash !== expectedPrevious) {
    return {
      ...walk,
      firstBreak: {
        ...at,
        reason:
          walk.lastHash === undefined
            ? 'The first hashed event names a previous hash, but no earlier event has one: events before it were removed or altered.'
            : "The event's previous hash is not the hash of the organization's event before it: an event between them was removed, inserted or altered.",
      },
    };
  }
  if (eventHash(event, event.chain.prevHash) !== event.chain.hash) {
    return {
      ...walk,
      firstBreak: { ...at, reason: 'The event does not match its hash: its type, stream, revision, data, metadata or time changed after it was stored.' },
    };
  }
  return { ...walk, lastHash: event.chain.hash, checked: walk.checked + 1 };
}
