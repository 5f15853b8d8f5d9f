import { canonicalJson, sha256Hex } from './hash';

/**
 * The tamper-evident chain of an organization's events. Each stored event records the hash of
 * the organization's previous event and its own hash:
 *
 *   hash = sha256_hex(canonical JSON of {id, type, stream, revision, data, metadata, createdAt, prevHash})
 *
 * canonical JSON = JSON with object keys sorted at every depth (hash.ts); `prevHash` is null for
 * the first event of the chain. Changing any of those fields of a stored event, or removing or
 * inserting an event before the organization's last one, breaks the chain where it happened.
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

export function eventHash(event: ChainedFields, prevHash: string | null): string {
  const { id, type, streamName, revision, data, metadata, createdAt } = event;
  return sha256Hex(canonicalJson({ id, type, stream: streamName, revision, data, metadata, createdAt, prevHash }));
}

/**
 * The chain of an export file: h0 = 64 zeros, h_i = sha256_hex(h_{i-1} + canonical JSON of
 * line i), over the event lines in file order. The final line states the count and h_n.
 */
export const EXPORT_CHAIN_START = '0'.repeat(64);

export function nextExportHash(previous: string, line: unknown): string {
  return sha256Hex(previous + canonicalJson(line));
}
