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
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
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
 * One line of documents of collection `c`: `k` the key lists, `r` the rows, each the index of its
 * key list and then the values in that order. `v` holds, per key list and key, the distinct
 * values of a key whose values repeat (a row then holds an index into them), or null.
 */
interface Chunk {
  c: string;
  k: string[][];
  v: Array<Array<unknown[] | null>>;
  r: unknown[][];
}

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
 * leaves it out of an object (and as the store's reads drop it). A key whose values repeat (an
 * organization, a list of permissions) is written once per distinct value, and the documents
 * loaded share that value: the store never changes a document in place, so sharing is safe, and
 * a load allocates (and the collector copies) each repeated value once, not once per document.
 */
function chunkOf(name: string, documents: readonly Document[]): Chunk {
  const shapes: string[][] = [];
  const bySignature = new Map<string, number>();
  let last: { keys: string[]; shape: number } | null = null;
  const shaped = documents.map((doc) => {
    const keys = Object.keys(doc).filter((key) => doc[key] !== undefined);
    // Documents of a collection mostly share one key list: compared with the last one first.
    let shape = last !== null && sameKeys(last.keys, keys) ? last.shape : bySignature.get(keys.join('\u0000'));
    if (shape === undefined) {
      shape = shapes.length;
      shapes.push(keys);
      bySignature.set(keys.join('\u0000'), shape);
    }
    last = { keys: shapes[shape], shape };
    return { doc, shape };
  });
  const dictionaries = shapes.map((keys, shape) => {
    const members = shaped.filter((entry) => entry.shape === shape).map((entry) => entry.doc);
    return keys.map((key) => dictionaryOf(members.map((doc) => doc[key])));
  });
  const rows = shaped.map(({ doc, shape }) => {
    const row: unknown[] = [shape];
    shapes[shape].forEach((key, i) => row.push(dictionaries[shape][i]?.indexOf(doc[key]) ?? doc[key]));
    return row;
  });
  return { c: name, k: shapes, v: dictionaries.map((columns) => columns.map((dictionary) => dictionary?.values ?? null)), r: rows };
}

/** Values worth sharing: strings too long for the engine to share itself, arrays and objects. */
function shareable(value: unknown): boolean {
  return (typeof value === 'string' && value.length > 10) || (typeof value === 'object' && value !== null);
}

/**
 * The distinct values of one key, when at most half of them are distinct and worth sharing; an
 * equal value (by its JSON) is the same entry. Null when the key is written inline.
 */
function dictionaryOf(column: readonly unknown[]): { values: unknown[]; indexOf(value: unknown): number } | null {
  if (column.length < 2 || !column.some(shareable)) return null;
  const signature = (value: unknown) => (typeof value === 'string' ? `s${value}` : `j${JSON.stringify(value)}`);
  const index = new Map<string, number>();
  const values: unknown[] = [];
  for (let seen = 0; seen < column.length; seen++) {
    const value = column[seen];
    // A key whose first values are all distinct (an id, a hash) is not worth counting further.
    if (seen === 16 && index.size === 16) return null;
    const key = signature(value);
    if (index.has(key)) continue;
    if (index.size * 2 >= column.length) return null;
    index.set(key, values.length);
    values.push(value);
  }
  return { values, indexOf: (value) => index.get(signature(value)) ?? -1 };
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((key, i) => key === b[i]);
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await fs.promises.open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Reads and checks a snapshot file: null when there is none; UnusableSnapshot when it is
 * damaged, of another format or version, or built by other projections. The checksum is computed
 * off the main thread while the lines are parsed; nothing parsed is answered unless it matches.
 */
export async function readSnapshot(file: string, fingerprint: string): Promise<LoadedSnapshot | null> {
  let content: Buffer;
  try {
    content = await fs.promises.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UnusableSnapshot(`unreadable: ${(error as Error).message}`);
  }
  const headerEnd = content.indexOf(NEWLINE);
  const header = checkedHeader(parse(content.toString('utf8', 0, Math.max(0, headerEnd))), fingerprint);
  const trailerStart = content.lastIndexOf(NEWLINE, content.length - 2) + 1;
  const trailer = parse(content.subarray(trailerStart).toString('utf8')) as Partial<Trailer> | null;
  if (trailerStart <= headerEnd || trailer?.end !== true || typeof trailer.sha256 !== 'string') throw new UnusableSnapshot('incomplete: it has no trailer');
  const digest = webcrypto.subtle.digest('SHA-256', content.subarray(0, trailerStart));
  let decoded: CapturedCollection[] | UnusableSnapshot;
  try {
    decoded = decodeBody(content, headerEnd + 1, trailerStart, header);
  } catch (error) {
    if (!(error instanceof UnusableSnapshot)) throw error;
    decoded = error;
  }
  // A damaged file is reported as damaged, whatever its damage made of the lines.
  if (Buffer.from(await digest).toString('hex') !== trailer.sha256) throw new UnusableSnapshot('damaged: its checksum does not match');
  if (decoded instanceof UnusableSnapshot) throw decoded;
  return { position: header.position, eventId: header.eventId, fingerprint: header.fingerprint, collections: decoded, bytes: content.length };
}

const NEWLINE = 0x0a;

function checkedHeader(parsed: unknown, fingerprint: string): Header {
  const header = parsed as Partial<Header> | null;
  if (header?.format !== SNAPSHOT_FORMAT) throw new UnusableSnapshot('not a read-model snapshot');
  if (header.version !== SNAPSHOT_VERSION) throw new UnusableSnapshot(`format version ${String(header.version)}, this release reads ${SNAPSHOT_VERSION}`);
  if (header.fingerprint !== fingerprint) throw new UnusableSnapshot('built by other projections (another release)');
  const listed = (entry: unknown): boolean => {
    const { name, documents, uniqueIndexes } = (entry ?? {}) as Partial<Header['collections'][number]>;
    return typeof name === 'string' && typeof documents === 'number' && Array.isArray(uniqueIndexes) && uniqueIndexes.every((index) => typeof index === 'string');
  };
  if (typeof header.position !== 'number' || typeof header.eventId !== 'string' || !Array.isArray(header.collections) || !header.collections.every(listed)) {
    throw new UnusableSnapshot('its header is incomplete');
  }
  return header as Header;
}

/** The chunk lines between the header and the trailer, as the collections the header lists. */
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
  const dictionaries = chunk?.v;
  const rows = chunk?.r;
  const wellFormed =
    Array.isArray(shapes) &&
    shapes.every((keys) => Array.isArray(keys) && keys.every((key) => typeof key === 'string')) &&
    Array.isArray(dictionaries) &&
    dictionaries.length === shapes.length &&
    dictionaries.every((columns, shape) => Array.isArray(columns) && columns.length === shapes[shape].length && columns.every((d) => d === null || Array.isArray(d)));
  if (!documents || !wellFormed || !Array.isArray(rows)) throw new UnusableSnapshot(`line ${line} is not a chunk of a listed collection`);
  // A key named __proto__ set by assignment would set the prototype: such key lists define it.
  const defining = shapes.map((keys) => keys.includes('__proto__'));
  for (const row of rows) {
    const shape = Array.isArray(row) ? (row[0] as number) : -1;
    const keys = shapes[shape] as string[] | undefined;
    if (keys === undefined || keys.length !== row.length - 1) throw new UnusableSnapshot(`line ${line} holds a row of no listed key list`);
    const columns = dictionaries[shape];
    const doc: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const dictionary = columns[i];
      const value = dictionary === null ? row[i + 1] : dictionary[row[i + 1] as number];
      if (value === undefined) throw new UnusableSnapshot(`line ${line} refers to a value it does not hold`);
      if (defining[shape]) Object.defineProperty(doc, keys[i], { value, enumerable: true, writable: true, configurable: true });
      else doc[keys[i]] = value;
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
