import type { AuditedEvent } from '#infrastructure/event-store/event-store.port';
import { ChainKey, chainKeyIdOf, ChainLink, eventHash, keyedEventHash } from '#shared/event-chain';

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
  /** A keyed link was seen: from there on, an unkeyed one is a forgery (anyone can compute sha256). */
  keyed: boolean;
  firstBreak: ChainBreak | null;
}

export const CHAIN_WALK_START: ChainWalk = { lastHash: undefined, checked: 0, unchained: 0, keyed: false, firstBreak: null };

/** The chain keys a walk checks links with, by id (those this service holds). */
export type ChainKeys = ReadonlyMap<string, ChainKey | undefined>;

/**
 * One step of `audit.verify`: the organization's events in position order, each checked against
 * the one before it. The chain begins at the first event with a hash; from there on, every event
 * must have one, name its predecessor's hash, and hash to what it holds, under the chain key its
 * hash names; once a link is keyed, every later one must be.
 */
export function walkChain(walk: ChainWalk, event: AuditedEvent, keys: ChainKeys): ChainWalk {
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
  const link = event.chain;
  const keyId = chainKeyIdOf(link.hash);
  const unmatched = keyId === null ? unkeyedBreak(walk, event, link) : keyedBreak(keys.get(keyId), keyId, event, link);
  if (unmatched) return { ...walk, firstBreak: { ...at, reason: unmatched } };
  return { ...walk, lastHash: event.chain.hash, checked: walk.checked + 1, keyed: walk.keyed || keyId !== null };
}

function unkeyedBreak(walk: ChainWalk, event: AuditedEvent, link: ChainLink): string | null {
  if (walk.keyed) {
    return "The event's hash carries no key although the events before it are keyed: it was written by someone without the chain key.";
  }
  return eventHash(event, link.prevHash) === link.hash ? null : CHANGED;
}

function keyedBreak(key: ChainKey | undefined, keyId: string, event: AuditedEvent, link: ChainLink): string | null {
  if (!key) {
    return (
      `The event's hash names chain key ${keyId}, which this service does not hold: the link was forged, ` +
      'or the master key it came from was replaced without "assay keys rotate-master", which keeps it.'
    );
  }
  return keyedEventHash(key, event, link.prevHash) === link.hash ? null : CHANGED;
}

const CHANGED =
  'The event does not match its hash: its type, stream, revision, data, metadata or time changed after it was stored, or it was written by someone without the chain key.';
