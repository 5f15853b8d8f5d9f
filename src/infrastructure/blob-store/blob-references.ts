/**
 * Large values out of events. On the way in, every string of an event's data over
 * BLOB_THRESHOLD_BYTES (UTF-8) is put in the blob store and replaced by a reference
 * `{"$blob": sha256, "bytes": n}`; an event still over MAX_EVENT_BYTES then has its largest
 * objects and arrays moved out too, as JSON (`"json": true`), until it weighs at most
 * SUBTREE_BUDGET_BYTES. On the way out, references are replaced by what they name, so readers
 * see the shapes that were appended. The log only holds data this service wrote and no domain
 * value is an object of exactly these keys, so a reference cannot be mistaken for data.
 */
import { BlobStore, isSha256 } from './blob-store.port';

/** A few KiB: the size above which a value costs more inline (copied by every read) than as a file. */
export const BLOB_THRESHOLD_BYTES = 4 * 1024;
/** Where an event that had to lose objects stops losing them: well under the limit. */
export const SUBTREE_BUDGET_BYTES = 256 * 1024;

export interface BlobReference {
  $blob: string;
  /** The value's size in bytes: UTF-8 of a string, or of the JSON of an object or array. */
  bytes: number;
  /** Present (true) when the blob holds JSON of an object or array rather than a string. */
  json?: true;
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type Container = Json[] | { [key: string]: Json };

export function isBlobReference(value: unknown): value is BlobReference {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const record = value as Record<string, unknown>;
  const shaped = keys.length === 2 || (keys.length === 3 && record.json === true);
  return shaped && isSha256(record.$blob) && Number.isSafeInteger(record.bytes);
}

/** The bytes an event weighs as stored: the JSON of what the store keeps. */
export function eventBytes(event: { type: string; data: unknown; metadata: unknown }): number {
  return Buffer.byteLength(JSON.stringify({ type: event.type, data: event.data, metadata: event.metadata }), 'utf8');
}

/**
 * The data with its large strings in the blob store (a copy; the argument is left as it was).
 * Data with no string that could be large is answered as it is (the same object) after one
 * synchronous walk: most events, and walking them with an await per value cost more than the append.
 */
export async function withLargeStringsOut(value: unknown, blobs: BlobStore): Promise<unknown> {
  return mayHoldLargeString(value) ? copyWithLargeStringsOut(value, blobs) : value;
}

function mayHoldLargeString(value: unknown): boolean {
  if (typeof value === 'string') return value.length * 3 > BLOB_THRESHOLD_BYTES;
  if (typeof value !== 'object' || value === null) return false;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (mayHoldLargeString(item)) return true;
  return false;
}

async function copyWithLargeStringsOut(value: unknown, blobs: BlobStore): Promise<unknown> {
  if (typeof value === 'string') {
    // A UTF-8 character is at most 3 bytes per UTF-16 unit: shorter strings need no measuring.
    if (value.length * 3 <= BLOB_THRESHOLD_BYTES) return value;
    const bytes = Buffer.from(value, 'utf8');
    if (bytes.length <= BLOB_THRESHOLD_BYTES) return value;
    return { $blob: await blobs.put(bytes), bytes: bytes.length };
  }
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) items.push(await withLargeStringsOut(item, blobs));
    return items;
  }
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = await withLargeStringsOut(item, blobs);
    return copy;
  }
  return value;
}

interface Candidate {
  parent: Container;
  key: string | number;
  value: Container;
  bytes: number;
  ancestors: Container[];
}

/**
 * Moves the largest objects and arrays of `data` (already without large strings) to the blob
 * store until the event weighs at most SUBTREE_BUDGET_BYTES; answers the event's weight then.
 */
export async function withLargeObjectsOut(data: Container, weight: number, blobs: BlobStore): Promise<number> {
  const candidates: Candidate[] = [];
  collect(data, [], candidates);
  candidates.sort((a, b) => b.bytes - a.bytes);
  const moved = new Set<Container>();
  let total = weight;
  for (const candidate of candidates) {
    if (total <= SUBTREE_BUDGET_BYTES) break;
    if (candidate.ancestors.some((ancestor) => moved.has(ancestor))) continue;
    const reference: BlobReference = { $blob: await blobs.put(Buffer.from(JSON.stringify(candidate.value), 'utf8')), bytes: candidate.bytes, json: true };
    (candidate.parent as Record<string | number, Json>)[candidate.key] = reference as unknown as Json;
    moved.add(candidate.value);
    total -= candidate.bytes - Buffer.byteLength(JSON.stringify(reference));
  }
  return total;
}

function collect(container: Container, ancestors: Container[], into: Candidate[]): void {
  const lineage = [...ancestors, container];
  for (const [key, value] of Object.entries<Json>(container)) {
    if (typeof value !== 'object' || value === null || isBlobReference(value)) continue;
    const index = Array.isArray(container) ? Number(key) : key;
    into.push({ parent: container, key: index, value, bytes: Buffer.byteLength(JSON.stringify(value), 'utf8'), ancestors: lineage });
    collect(value, lineage, into);
  }
}

/** Reads a blob's content as text; the caller may cache it. */
export type BlobText = (sha256: string) => Promise<string>;

/**
 * The data with every reference replaced by what it names. Data without references is answered
 * as it is (the same object), so events stored before blobs existed, and small ones, cost one
 * synchronous walk. Objects moved out as JSON may hold references of their own: resolved in turn.
 */
export async function withBlobsIn(value: unknown, text: BlobText): Promise<unknown> {
  let current = value;
  for (;;) {
    const names = new Set<string>();
    referencesIn(current, names);
    if (names.size === 0) return current;
    const contents = new Map<string, string>();
    for (const name of names) contents.set(name, await text(name));
    current = replaced(current, contents);
  }
}

function referencesIn(value: unknown, into: Set<string>): void {
  if (typeof value !== 'object' || value === null) return;
  if (isBlobReference(value)) {
    into.add(value.$blob);
    return;
  }
  for (const item of Array.isArray(value) ? value : Object.values(value)) referencesIn(item, into);
}

/** A copy along the paths that held references; untouched branches are shared. */
function replaced(value: unknown, contents: ReadonlyMap<string, string>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isBlobReference(value)) {
    const content = contents.get(value.$blob) as string;
    return value.json === true ? (JSON.parse(content) as unknown) : content;
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const next = replaced(item, contents);
      if (next !== item) (copy ??= value.slice())[index] = next;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const next = replaced(item, contents);
    if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
  }
  return copy ?? value;
}
