import { createHmac } from 'node:crypto';
import { canonicalJson, sha256Hex } from './hash';

/**
 * The tamper-evident chain of an organization's events. Each stored event records the hash of
 * the organization's previous event and its own hash, keyed:
 *
 *   hash = <chain key id> "." hmac_sha256_hex(chain key, canonical JSON of {id, type, stream, revision, data, metadata, createdAt, prevHash})
 *
 * canonical JSON = JSON with object keys sorted at every depth (hash.ts); `prevHash` is null for
 * the first event of the chain. Changing any of those fields of a stored event, or removing or
 * inserting an event before the organization's last one, breaks the chain where it happened; and
 * without the key nobody can write a link that holds. Links stored before the chain was keyed are
 * a bare sha256_hex of the same text (64 hex digits, no key id).
 */
export interface ChainLink {
  prevHash: string | null;
  hash: string;
}

/** What the hash covers: the event as stored, whatever store holds it. */
export interface ChainedFields {
  id: string;
  type: string;
  streamName: string;
  revision: number;
  data: unknown;
  metadata: unknown;
  createdAt: string;
}

/** A key the chain's links are computed under; its id is public and names it in each link. */
export interface ChainKey {
  id: string;
  key: Buffer;
}

const KEYED_HASH = /^(ck_[0-9a-f]{16})\.[0-9a-f]{64}$/;

function chainedText(event: ChainedFields, prevHash: string | null): string {
  const { id, type, streamName, revision, data, metadata, createdAt } = event;
  return canonicalJson({ id, type, stream: streamName, revision, data, metadata, createdAt, prevHash });
}

/** The unkeyed link of logs written before the chain was keyed (and of stores opened without a key). */
export function eventHash(event: ChainedFields, prevHash: string | null): string {
  return sha256Hex(chainedText(event, prevHash));
}

export function keyedEventHash(chainKey: ChainKey, event: ChainedFields, prevHash: string | null): string {
  return `${chainKey.id}.${createHmac('sha256', chainKey.key).update(chainedText(event, prevHash)).digest('hex')}`;
}

/** The link a store writes: keyed when it holds a chain key. */
export function linkHash(chainKey: ChainKey | null, event: ChainedFields, prevHash: string | null): string {
  return chainKey ? keyedEventHash(chainKey, event, prevHash) : eventHash(event, prevHash);
}

/** The id of the key a hash was computed under, or null for an unkeyed (sha256) hash. */
export function chainKeyIdOf(hash: string): string | null {
  return KEYED_HASH.exec(hash)?.[1] ?? null;
}

/**
 * The chain of an export file: h0 = 64 zeros, h_i = sha256_hex(h_{i-1} + canonical JSON of
 * line i), over the event lines in file order. The final line states the count and h_n.
 */
export const EXPORT_CHAIN_START = '0'.repeat(64);

export function nextExportHash(previous: string, line: unknown): string {
  return sha256Hex(previous + canonicalJson(line));
}
