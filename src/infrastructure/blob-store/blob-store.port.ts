/**
 * The blob store: large values kept by content, beside the event log. An event names a blob by
 * its SHA-256 and the blob is stored before the event is appended, so the log never names a
 * missing blob. Blobs are immutable and never deleted: they are as much the log as the events.
 */
import { createHash } from 'node:crypto';

export interface BlobStore {
  /** Stores the bytes (durably, once however often they are put) and answers their SHA-256, lower-case hex. */
  put(bytes: Uint8Array): Promise<string>;
  /** The bytes stored under `sha256`; BlobMissing when there are none. */
  get(sha256: string): Promise<Buffer>;
  has(sha256: string): Promise<boolean>;
  close(): Promise<void>;
}

export const BLOB_STORE = Symbol('BlobStore');

/** Raised when an event names a blob the store does not hold (the log was restored without its blobs). */
export class BlobMissing extends Error {
  constructor(readonly sha256: string) {
    super(`Blob ${sha256} is missing from the blob store: restore the blobs with the event log they belong to.`);
    this.name = 'BlobMissing';
  }
}

/** Raised when a stored blob's bytes no longer hash to its name (damaged at rest). */
export class BlobCorrupted extends Error {
  constructor(readonly sha256: string) {
    super(`Blob ${sha256} is damaged: its content no longer matches its hash. Restore it from a backup.`);
    this.name = 'BlobCorrupted';
  }
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

export function isSha256(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Refuses a name that is not a SHA-256: it would otherwise name a path or a query. */
export function requireSha256(value: string): string {
  if (!isSha256(value)) throw new TypeError(`"${String(value).slice(0, 80)}" is not a SHA-256 in lower-case hex.`);
  return value;
}

/** The bytes answered by a get, checked against their name. */
export function verified(sha256: string, bytes: Buffer): Buffer {
  if (sha256Of(bytes) !== sha256) throw new BlobCorrupted(sha256);
  return bytes;
}
