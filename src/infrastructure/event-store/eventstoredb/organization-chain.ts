/**
 * The organization's hash chain as the EventStoreDB adapter keeps it (the SQLite log keeps it in
 * columns, inside one transaction; EventStoreDB has no transaction across streams).
 *
 * Each chained event carries its link in its stored metadata, under `assayChain`:
 * `{prevHash, hash, recordedAt}`. `recordedAt` is the adapter's own time for the append: the
 * server sets `created` only once the event is written, after its hash had to be computed, so
 * the adapter's time is what the hash covers and what the event reads back as its `createdAt`.
 * Reads strip the member, so the metadata reads as it was appended.
 *
 * Each organization has a chain stream `auditchain-{organization}`, the store's bookkeeping
 * (hidden from `$all` reads and subscriptions), whose events are claims on the chain: an append
 * first claims the next link at the chain stream's revision it read (so two writers of one
 * organization cannot both link to the same hash), then appends its events. A claim names where
 * its events go (stream, revision, first id): whoever reads it next can tell whether they landed,
 * and a claim whose events did not land is voided by another claim-stream event, which puts the
 * chain's head back where the claim found it. See chained-appends.ts.
 */
import { linkHash } from '#shared/event-chain';
import type { ChainKey, ChainLink } from '#shared/event-chain';
import { isLiveness } from '../event-store.port';
import type { EventMetadata, NewEvent, RecordedEvent } from '../event-store.port';

/** The stored metadata member that holds an event's link and the adapter's time. */
export const CHAIN_METADATA_KEY = 'assayChain';

export interface StoredLink extends ChainLink {
  recordedAt: string;
}

export const CHAIN_STREAM_PREFIX = 'auditchain-';

export function chainStreamOf(organization: string): string {
  return `${CHAIN_STREAM_PREFIX}${organization}`;
}

export function isChainStream(stream: string): boolean {
  return stream.startsWith(CHAIN_STREAM_PREFIX);
}

export const CHAIN_CLAIMED = 'AuditChainClaimed';
export const CHAIN_CLAIM_VOIDED = 'AuditChainClaimVoided';

/** The next links of an organization's chain, claimed for one append before it is sent. */
export interface ChainClaim {
  /** Where the append goes: its stream and the revision of its first event. */
  stream: string;
  firstRevision: number;
  /** The organization's last event in the append: that event stored with this hash means the append landed. */
  revision: number;
  /** The head the claim found, and the hash of the organization's last event in the append. */
  prevHash: string | null;
  hash: string;
  recordedAt: string;
}

/** A claim whose events never landed (or never will): the head goes back to its `prevHash`. */
export interface ChainClaimVoided {
  claimRevision: number;
  head: string | null;
  reason: string;
}

/** The chain's head as far as it is settled: the chain stream's revision and the hash to link to. */
export interface SettledHead {
  /** -1 when the organization has no chain stream yet. */
  revision: number;
  hash: string | null;
}

/** What the chain stream's last event says. */
export type ChainTip = { kind: 'settled'; head: SettledHead } | { kind: 'claimed'; revision: number; claimId: string; claim: ChainClaim };

export const EMPTY_HEAD: SettledHead = { revision: -1, hash: null };

export function tipOf(last: RecordedEvent | undefined): ChainTip {
  if (!last) return { kind: 'settled', head: EMPTY_HEAD };
  if (last.type === CHAIN_CLAIMED) return { kind: 'claimed', revision: last.revision, claimId: last.id, claim: last.data as ChainClaim };
  if (last.type === CHAIN_CLAIM_VOIDED) return { kind: 'settled', head: { revision: last.revision, hash: (last.data as ChainClaimVoided).head } };
  throw new Error(`The audit chain stream ${last.streamName} ends with an event of an unknown type, ${last.type}.`);
}

function chainEventMetadata(organization: string, id: string): EventMetadata {
  return { organization, actor: 'system:audit-chain', correlationId: id, causationId: id };
}

export function claimEvent(organization: string, id: string, claim: ChainClaim): NewEvent {
  return { id, type: CHAIN_CLAIMED, data: claim, metadata: chainEventMetadata(organization, id) };
}

export function voidEvent(organization: string, id: string, voided: ChainClaimVoided): NewEvent {
  return { id, type: CHAIN_CLAIM_VOIDED, data: voided, metadata: chainEventMetadata(organization, id) };
}

/** The organization an event is chained under: the SQLite log's rule (a string in the metadata, liveness events left out). */
export function organizationOf(event: NewEvent): string | null {
  if (isLiveness(event.metadata)) return null;
  const organization: unknown = event.metadata.organization;
  return typeof organization === 'string' ? organization : null;
}

export function organizationsOf(events: readonly NewEvent[]): string[] {
  const found = new Set<string>();
  for (const event of events) {
    const organization = organizationOf(event);
    if (organization !== null) found.add(organization);
  }
  return [...found].sort();
}

/** As the server stores it and a read parses it back: what the hash must cover. */
const asStored = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null)) as unknown;

/**
 * The append as it is stored: each event of an organization with its link after the one before
 * it (the organization's head first), and for each organization the claim that covers them.
 */
export function linkAppend(
  stream: string,
  events: readonly NewEvent[],
  firstRevision: number,
  recordedAt: string,
  heads: ReadonlyMap<string, SettledHead>,
  chainKey: ChainKey | null,
): { stored: NewEvent[]; claims: Map<string, ChainClaim> } {
  const lastHashes = new Map<string, string | null>();
  const claims = new Map<string, ChainClaim>();
  const stored = events.map((event, index) => {
    const organization = organizationOf(event);
    if (organization === null) return event;
    const { [CHAIN_METADATA_KEY]: _replaced, ...metadata } = event.metadata;
    const prevHash = lastHashes.has(organization) ? (lastHashes.get(organization) ?? null) : (heads.get(organization)?.hash ?? null);
    const fields = {
      id: event.id,
      type: event.type,
      streamName: stream,
      revision: firstRevision + index,
      data: asStored(event.data),
      metadata: asStored(metadata),
      createdAt: recordedAt,
    };
    const hash = linkHash(chainKey, fields, prevHash);
    lastHashes.set(organization, hash);
    const claim = claims.get(organization);
    claims.set(organization, { stream, firstRevision, revision: fields.revision, prevHash: claim ? claim.prevHash : prevHash, hash, recordedAt });
    const link: StoredLink = { prevHash, hash, recordedAt };
    return { ...event, metadata: { ...metadata, [CHAIN_METADATA_KEY]: link } };
  });
  return { stored, claims };
}

/** Splits a stored event's link out of its metadata; `createdAt` becomes the time the hash covers. */
export function splitStoredLink(event: RecordedEvent): { event: RecordedEvent; chain: ChainLink | null } {
  if (!Object.hasOwn(event.metadata, CHAIN_METADATA_KEY)) return { event, chain: null };
  const { [CHAIN_METADATA_KEY]: stored, ...metadata } = event.metadata;
  const link = isStoredLink(stored) ? stored : null;
  return {
    event: { ...event, metadata, createdAt: link?.recordedAt ?? event.createdAt },
    chain: link && { prevHash: link.prevHash, hash: link.hash },
  };
}

function isStoredLink(value: unknown): value is StoredLink {
  if (typeof value !== 'object' || value === null) return false;
  const link = value as StoredLink;
  return typeof link.hash === 'string' && typeof link.recordedAt === 'string' && (link.prevHash === null || typeof link.prevHash === 'string');
}
