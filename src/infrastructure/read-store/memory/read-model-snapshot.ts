/**
 * The embedded read store's snapshot file: every collection's documents at one log position, so
 * that a restart loads them and replays only the events after it. JSON lines: a header, chunks
 * of documents, and a trailer holding the sha256 of every byte before it. A file that fails any
 * check (format, version, fingerprint, checksum, the log's event at that position) is not used.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Document } from '../read-store.port';
import type { CapturedCollection } from './memory-read-store';

export const SNAPSHOT_FILE = 'read-models.snapshot';
export const SNAPSHOT_FORMAT = 'assay-read-models';
/** Bumped whenever the file's layout changes: an older file is then ignored. */
export const SNAPSHOT_VERSION = 1;
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
  collections: Array<{ name: string; documents: number }>;
}

interface Chunk {
  c: string;
  d: Document[];
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
      collections: collections.map(({ name, documents }) => ({ name, documents: documents.length })),
    };
    await line(header);
    for (const { name, documents } of collections) {
      for (let start = 0; start < documents.length; start += CHUNK) {
        await line({ c: name, d: documents.slice(start, start + CHUNK) } satisfies Chunk);
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
 * damaged, of another format or version, or built by other projections.
 */
export function readSnapshot(file: string, fingerprint: string): LoadedSnapshot | null {
  let content: Buffer;
  try {
    content = fs.readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UnusableSnapshot(`unreadable: ${(error as Error).message}`);
  }
  const trailerStart = content.lastIndexOf('\n', content.length - 2) + 1;
  const trailer = parse(content.subarray(trailerStart).toString('utf8')) as Partial<Trailer> | null;
  if (trailer?.end !== true || typeof trailer.sha256 !== 'string') throw new UnusableSnapshot('incomplete: it has no trailer');
  const body = content.subarray(0, trailerStart);
  if (createHash('sha256').update(body).digest('hex') !== trailer.sha256) throw new UnusableSnapshot('damaged: its checksum does not match');
  const lines = body.toString('utf8').split('\n');
  const header = parse(lines[0]) as Partial<Header> | null;
  if (header?.format !== SNAPSHOT_FORMAT) throw new UnusableSnapshot('not a read-model snapshot');
  if (header.version !== SNAPSHOT_VERSION) throw new UnusableSnapshot(`format version ${String(header.version)}, this release reads ${SNAPSHOT_VERSION}`);
  if (header.fingerprint !== fingerprint) throw new UnusableSnapshot('built by other projections (another release)');
  if (typeof header.position !== 'number' || typeof header.eventId !== 'string' || !Array.isArray(header.collections)) {
    throw new UnusableSnapshot('its header is incomplete');
  }
  const byName = new Map<string, Document[]>(header.collections.map(({ name }) => [name, []]));
  for (let i = 1; i < lines.length; i++) {
    if (lines[i] === '') continue;
    const chunk = parse(lines[i]) as Chunk | null;
    const documents = chunk ? byName.get(chunk.c) : undefined;
    if (!chunk || !documents || !Array.isArray(chunk.d)) throw new UnusableSnapshot(`line ${i + 1} is not a chunk of a listed collection`);
    for (const doc of chunk.d) documents.push(doc);
  }
  for (const { name, documents } of header.collections) {
    if (byName.get(name)?.length !== documents)
      throw new UnusableSnapshot(`collection ${name} holds ${byName.get(name)?.length} documents, ${documents} expected`);
  }
  return {
    position: header.position,
    eventId: header.eventId,
    fingerprint: header.fingerprint,
    collections: [...byName].map(([name, documents]) => ({ name, documents })),
    bytes: content.length,
  };
}

/** The parsed line, or null when it is not JSON; the caller checks its shape. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
