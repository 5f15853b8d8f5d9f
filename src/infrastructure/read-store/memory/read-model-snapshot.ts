/**
 * The embedded read store's snapshot file: every collection's documents at one log position, so
 * that a restart loads them and replays only the events after it. JSON lines: a header, chunks
 * of documents, and a trailer holding the sha256 of every byte before it. A file that fails any
 * check (format, version, fingerprint, checksum, the log's event at that position) is not used.
 *
 * Version 2 writes each chunk's documents as rows of values under the key lists ("shapes") they
 * share, rather than as objects: a quarter fewer bytes to read and parse, and no key is parsed
 * per document. The documents keep their order (a narrowed query answers in insertion order).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { syncDirectory } from '../../files/sync-directory';
import type { Document } from '../read-store.port';
import type { CapturedCollection } from './memory-read-store';

export const SNAPSHOT_FILE = 'read-models.snapshot';
export const SNAPSHOT_FORMAT = 'assay-read-models';
/** Bumped whenever the file's layout changes: an older file is then ignored. */
export const SNAPSHOT_VERSION = 2;
/** Documents per line: small enough to yield to requests between lines, large enough to write fast. */
const CHUNK = 500;

/** Which log event the documents reflect, and which projections built them. */
export interface SnapshotOrigin {
  position: number;
  /** The id of the event at `position`: a snapshot of another log (the same positions) is refused. */
  eventId: string;
  /** What built the documents (the projections and the release): a snapshot of others is refused. */
  fingerprint: string;
}

interface Header extends SnapshotOrigin {
  format: string;
  version: number;
  createdAt: string;
  /** Each collection, its document count, and the unique indexes its documents satisfied. */
  collections: Array<{ name: string; documents: number; uniqueIndexes: string[] }>;
}

/**
 * One line of documents of collection `c`: `k` the key lists; `r` the rows one after another in
 * one array, each the index of its key list and then the values in that order (one array per
 * line rather than per document: fewer objects for the collector while a start loads them).
 * `e` says per key list and key how its values are written: INLINE, or, for a key whose strings
 * repeat (an organization, permissions), as indexes into `t`, the line's strings, so that the
 * documents loaded share one string each rather than each holding a copy.
 */
interface Chunk {
  c: string;
  k: string[][];
  e: ValueEncoding[][];
  t: string[];
  r: unknown[];
}

const INLINE = 0;
/** A string, written as its index in the line's strings. */
const STRING = 1;
/** An array of strings, written as an array of their indexes. */
const STRINGS = 2;
type ValueEncoding = typeof INLINE | typeof STRING | typeof STRINGS;

interface Trailer {
  end: true;
  sha256: string;
}

export interface LoadedSnapshot extends SnapshotOrigin {
  collections: CapturedCollection[];
  bytes: number;
}

/** Why a snapshot file was not used, in one line for the log. */
export class UnusableSnapshot extends Error {}

/**
 * Writes the captured collections to `file` atomically: a temp file beside it, fsynced, renamed
 * over it, and the directory fsynced. Lines go out one chunk at a time through the event loop, so
 * requests are served between them. The documents are the store's own objects, which the store
 * replaces rather than changes, so the capture stays as it was while this writes.
 */
export async function writeSnapshot(file: string, origin: SnapshotOrigin, collections: readonly CapturedCollection[]): Promise<number> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await fs.promises.open(temp, 'w', 0o600);
  const hash = createHash('sha256');
  let bytes = 0;
  const line = async (value: unknown) => {
    const text = `${JSON.stringify(value)}\n`;
    hash.update(text);
    bytes += Buffer.byteLength(text);
    await handle.write(text);
  };
  try {
    const header: Header = {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      ...origin,
      createdAt: new Date().toISOString(),
      collections: collections.map(({ name, documents, uniqueIndexes }) => ({ name, documents: documents.length, uniqueIndexes: uniqueIndexes ?? [] })),
    };
    await line(header);
    for (const { name, documents } of collections) {
      for (let start = 0; start < documents.length; start += CHUNK) {
        await line(chunkOf(name, documents.slice(start, start + CHUNK)));
      }
    }
    const trailer: Trailer = { end: true, sha256: hash.digest('hex') };
    await handle.write(`${JSON.stringify(trailer)}\n`);
    await handle.sync();
    await handle.close();
    await fs.promises.rename(temp, file);
    await syncDirectory(path.dirname(file));
    return bytes;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.promises.rm(temp, { force: true });
    throw error;
  }
}

/**
 * The documents as rows under their key lists. A key holding undefined is left out, as JSON
 * leaves it out of an object (and as the store's reads drop it).
 */
function chunkOf(name: string, documents: readonly Document[]): Chunk {
  const shapes: string[][] = [];
  const bySignature = new Map<string, number>();
  let lastShape = -1;
  const shaped = documents.map((doc) => {
    const keys = Object.keys(doc).filter((key) => doc[key] !== undefined);
    // Documents of a collection mostly share one key list: compared with the last one first.
    let shape: number | undefined = lastShape >= 0 && sameKeys(shapes[lastShape], keys) ? lastShape : bySignature.get(keys.join('\u0000'));
    if (shape === undefined) {
      shape = shapes.length;
      shapes.push(keys);
      bySignature.set(keys.join('\u0000'), shape);
    }
    lastShape = shape;
    return { doc, shape };
  });
  const encodings = shapes.map((keys, shape) => {
    const members = shaped.filter((entry) => entry.shape === shape);
    return keys.map((key) => encodingOf(members.map(({ doc }) => doc[key])));
  });
  const strings = new Map<string, number>();
  const indexOf = (value: string): number => {
    let index = strings.get(value);
    if (index === undefined) strings.set(value, (index = strings.size));
    return index;
  };
  const rows: unknown[] = [];
  for (const { doc, shape } of shaped) {
    rows.push(shape);
    shapes[shape].forEach((key, i) => {
      const value = doc[key];
      const encoding = encodings[shape][i];
      rows.push(encoding === STRING ? indexOf(value as string) : encoding === STRINGS ? (value as string[]).map(indexOf) : value);
    });
  }
  return { c: name, k: shapes, e: encodings, t: [...strings.keys()], r: rows };
}

/**
 * STRING for a key whose values are all strings, STRINGS for one whose values are all arrays of
 * strings, when at most half of those strings are distinct; else INLINE.
 */
function encodingOf(column: readonly unknown[]): ValueEncoding {
  const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
  const encoding = column.every((value) => typeof value === 'string') ? STRING : column.every(isStrings) ? STRINGS : INLINE;
  if (encoding === INLINE || column.length < 2) return INLINE;
  const all = encoding === STRING ? (column as string[]) : (column as string[][]).flat();
  const seen = new Set<string>();
  for (let i = 0; i < all.length; i++) {
    seen.add(all[i]);
    // Its first strings all distinct (an id, a hash): not worth counting further.
    if (seen.size * 2 > all.length || (i === 15 && seen.size === 16)) return INLINE;
  }
  return encoding;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((key, i) => key === b[i]);
}

/**
 * Reads and checks a snapshot file: null when there is none; UnusableSnapshot when it is
 * damaged, of another format or version, or built by other projections. The checksum is computed
 * off the main thread while the lines are parsed; nothing parsed is answered unless it matches.
 */
export async function readSnapshot(file: string, fingerprint: string): Promise<LoadedSnapshot | null> {
  let content: Buffer;
  try {
    content = await readShared(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UnusableSnapshot(`unreadable: ${(error as Error).message}`);
  }
  const headerEnd = content.indexOf(NEWLINE);
  const header = checkedHeader(parse(content.toString('utf8', 0, Math.max(0, headerEnd))), fingerprint);
  const trailerStart = content.lastIndexOf(NEWLINE, content.length - 2) + 1;
  const trailer = parse(content.subarray(trailerStart).toString('utf8')) as Partial<Trailer> | null;
  if (trailerStart <= headerEnd || trailer?.end !== true || typeof trailer.sha256 !== 'string') throw new UnusableSnapshot('incomplete: it has no trailer');
  const digest = sha256OffThread(content, trailerStart);
  let decoded: CapturedCollection[] | UnusableSnapshot;
  try {
    decoded = decodeBody(content, headerEnd + 1, trailerStart, header);
  } catch (error) {
    if (!(error instanceof UnusableSnapshot)) throw error;
    decoded = error;
  }
  // A damaged file is reported as damaged, whatever its damage made of the lines.
  if ((await digest) !== trailer.sha256) throw new UnusableSnapshot('damaged: its checksum does not match');
  if (decoded instanceof UnusableSnapshot) throw decoded;
  return { position: header.position, eventId: header.eventId, fingerprint: header.fingerprint, collections: decoded, bytes: content.length };
}

const NEWLINE = 0x0a;

/** The whole file in memory another thread can read too (the checksum's). */
async function readShared(file: string): Promise<Buffer> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const content = Buffer.from(new SharedArrayBuffer(size));
    for (let read = 0; read < size;) {
      const { bytesRead } = await handle.read(content, read, size - read, read);
      if (bytesRead === 0) throw new Error(`it ended after ${read} of ${size} bytes`);
      read += bytesRead;
    }
    return content;
  } finally {
    await handle.close();
  }
}

/** Hashes the first `length` bytes of the shared buffer. Inline: no file to find beside the built code. */
const HASH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
parentPort.postMessage(createHash('sha256').update(new Uint8Array(workerData.buffer, 0, workerData.length)).digest('hex'));
`;

/**
 * The sha256 (hex) of the first `length` bytes, computed by a worker thread while this thread
 * parses the same bytes: on another core, the checksum costs a start nothing. Where no thread
 * can be started, this thread computes it.
 */
function sha256OffThread(content: Buffer, length: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const worker = new Worker(HASH_WORKER, { eval: true, workerData: { buffer: content.buffer, length } });
    worker.once('message', (hex: string) => resolve(hex));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the checksum's thread ended (${code}) without an answer`)));
  }).catch(() => createHash('sha256').update(content.subarray(0, length)).digest('hex'));
}

function checkedHeader(parsed: unknown, fingerprint: string): Header {
  const header = parsed as Partial<Header> | null;
  if (header?.format !== SNAPSHOT_FORMAT) throw new UnusableSnapshot('not a read-model snapshot');
  if (header.version !== SNAPSHOT_VERSION) throw new UnusableSnapshot(`format version ${String(header.version)}, this release reads ${SNAPSHOT_VERSION}`);
  if (header.fingerprint !== fingerprint) throw new UnusableSnapshot('built by other projections (another release)');
  const listed = (entry: unknown): boolean => {
    const { name, documents, uniqueIndexes } = (entry ?? {}) as Partial<Header['collections'][number]>;
    return (
      typeof name === 'string' && typeof documents === 'number' && Array.isArray(uniqueIndexes) && uniqueIndexes.every((index) => typeof index === 'string')
    );
  };
  if (typeof header.position !== 'number' || typeof header.eventId !== 'string' || !Array.isArray(header.collections) || !header.collections.every(listed)) {
    throw new UnusableSnapshot('its header is incomplete');
  }
  return header as Header;
}

/**
 * The chunk lines between the header and the trailer, as the collections the header lists. (An
 * array per collection, made into the store's Map by the restore afterwards: building the Map
 * while parsing measured slower, the collector then tracing the growing Map.)
 */
function decodeBody(content: Buffer, from: number, to: number, header: Header): CapturedCollection[] {
  const byName = new Map<string, Document[]>(header.collections.map(({ name }) => [name, []]));
  let line = 1;
  for (let start = from; start < to; line++) {
    const end = content.indexOf(NEWLINE, start);
    const stop = end < 0 || end > to ? to : end;
    if (stop > start) decodeChunk(parse(content.toString('utf8', start, stop)), byName, line + 1);
    start = stop + 1;
  }
  return header.collections.map(({ name, documents, uniqueIndexes }) => {
    const decoded = byName.get(name) ?? [];
    if (decoded.length !== documents) throw new UnusableSnapshot(`collection ${name} holds ${decoded.length} documents, ${documents} expected`);
    return { name, documents: decoded, uniqueIndexes };
  });
}

/** Appends one line's documents to its collection, rebuilt from the rows and key lists. */
function decodeChunk(parsed: unknown, byName: Map<string, Document[]>, line: number): void {
  const chunk = parsed as Partial<Chunk> | null;
  const documents = typeof chunk?.c === 'string' ? byName.get(chunk.c) : undefined;
  const shapes = chunk?.k;
  const encodings = chunk?.e;
  const strings = chunk?.t;
  const rows = chunk?.r;
  const wellFormed =
    Array.isArray(shapes) &&
    shapes.every((keys) => Array.isArray(keys) && keys.every((key) => typeof key === 'string')) &&
    Array.isArray(encodings) &&
    encodings.length === shapes.length &&
    encodings.every(
      (kinds, shape) =>
        Array.isArray(kinds) &&
        kinds.length === shapes[shape].length &&
        (kinds as unknown[]).every((kind) => kind === INLINE || kind === STRING || kind === STRINGS),
    ) &&
    Array.isArray(strings) &&
    strings.every((value) => typeof value === 'string');
  if (!documents || !wellFormed || !Array.isArray(rows)) throw new UnusableSnapshot(`line ${line} is not a chunk of a listed collection`);
  const stringAt = (index: unknown): string => {
    const value = strings[index as number] as unknown;
    if (typeof value !== 'string' || !Number.isInteger(index)) throw new UnusableSnapshot(`line ${line} refers to a string it does not hold`);
    return value;
  };
  const valueOf = (value: unknown, encoding: ValueEncoding): unknown => {
    if (encoding === INLINE) return value;
    if (encoding === STRING) return stringAt(value);
    if (!Array.isArray(value)) throw new UnusableSnapshot(`line ${line} holds a list of strings that is not one`);
    const items: string[] = new Array<string>(value.length);
    for (let i = 0; i < value.length; i++) items[i] = stringAt(value[i]);
    return items;
  };
  // A key named __proto__ set by assignment would set the prototype: such key lists define it.
  const defining = shapes.map((keys) => keys.includes('__proto__'));
  for (let at = 0; at < rows.length;) {
    const shape = rows[at++];
    const keys = typeof shape === 'number' ? shapes[shape] : undefined;
    if (keys === undefined || at + keys.length > rows.length) throw new UnusableSnapshot(`line ${line} holds a row of no listed key list`);
    const kinds = encodings[shape as number];
    const doc: Record<string, unknown> = {};
    if (defining[shape as number]) {
      keys.forEach((key, i) => Object.defineProperty(doc, key, { value: valueOf(rows[at++], kinds[i]), enumerable: true, writable: true, configurable: true }));
    } else {
      for (let i = 0; i < keys.length; i++) {
        const kind = kinds[i];
        doc[keys[i]] = kind === INLINE ? rows[at++] : valueOf(rows[at++], kind);
      }
    }
    if (typeof doc._id !== 'string') throw new UnusableSnapshot(`line ${line} holds a document without a string _id`);
    documents.push(doc as Document);
  }
}

/** The parsed line, or null when it is not JSON; the caller checks its shape. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
