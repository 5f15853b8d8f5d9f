import { createHash } from 'node:crypto';
import { BigIntStats, createReadStream, lstatSync } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import * as path from 'node:path';
import { readdirQuietly, readRegularFileSync, SYNC_FILE_BYTES, SYNC_WALK_ENTRIES } from './file-calls';

/**
 * What a workspace holds, path → content hash, taken in-process (no `find`, no spawn) before and
 * after the agent's turn. Links are recorded by their target and never followed; `.git`
 * directories are skipped (the agent's commits are not file changes of their own).
 */
export interface SnapshotEntry {
  sha256: string;
  regular: boolean;
  size: number;
  /** Identity of the file's state: unchanged inode, size, mtime and ctime mean unchanged content. */
  stamp: string;
}

export type Snapshot = Map<string, SnapshotEntry>;

/**
 * The contents a snapshot keeps, so that what changed can later be shown as a diff: files of at
 * most `fileBytes`, while `budgetBytes` lasts (a large workspace keeps the first it reads).
 */
export interface KeptContents {
  fileBytes: number;
  budgetBytes: number;
  byPath: Map<string, Buffer>;
}

const HASH_CONCURRENCY = 8;
const STREAM_ABOVE_BYTES = 4 * 1024 * 1024;

/**
 * Up to this many entries, and files up to SYNC_READ_BYTES while this many bytes in all, are
 * read synchronously (file-calls.ts): a workspace of a few files is described at once, without a
 * pool round trip and an event-loop turn per call; a larger one goes on through the pool.
 */
const SYNC_READ_BYTES = 1024 * 1024;

interface SyncBudget {
  entries: number;
  bytes: number;
}

/** Takes a snapshot; entries whose stamp is unchanged since `previous` reuse its hash; `ignored` paths are left out. */
export async function snapshotWorkspace(
  workspace: string,
  previous: Snapshot = new Map(),
  ignored: ReadonlySet<string> = new Set(),
  keep: KeptContents | null = null,
): Promise<Snapshot> {
  const paths: string[] = [];
  const budget: SyncBudget = { entries: SYNC_WALK_ENTRIES, bytes: SYNC_READ_BYTES };
  await walk(workspace, '', paths, budget);
  if (ignored.size > 0) paths.splice(0, paths.length, ...paths.filter((relative) => !ignored.has(relative)));
  const snapshot: Snapshot = new Map();
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const relative = paths[next++];
      const file = path.join(workspace, relative);
      const entry = await describe(file, previous.get(relative), budget);
      if (entry !== null) snapshot.set(relative, entry);
      if (entry?.regular === true && keep !== null && entry.size <= keep.fileBytes && entry.size <= keep.budgetBytes) {
        // Read while nothing runs in the workspace (before the agent's first turn): the content the hash describes.
        const content = await readFile(file).catch(() => null);
        if (content !== null && content.length === entry.size) {
          keep.budgetBytes -= content.length;
          keep.byPath.set(relative, content);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, paths.length) }, worker));
  return snapshot;
}

async function walk(root: string, relative: string, into: string[], budget: SyncBudget): Promise<void> {
  const directory = path.join(root, relative);
  const entries = budget.entries > 0 ? readdirQuietly(directory) : await readdir(directory, { withFileTypes: true }).catch(() => []);
  budget.entries -= entries.length;
  for (const entry of entries) {
    const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== '.git') await walk(root, child, into, budget);
    } else into.push(child);
  }
}

/** The entry's lstat, or null when it is gone or cannot be read (a parent the trial made unsearchable). */
function lstatQuietly(file: string): BigIntStats | null {
  try {
    return lstatSync(file, { bigint: true });
  } catch {
    return null;
  }
}

async function describe(file: string, previous: SnapshotEntry | undefined, budget: SyncBudget): Promise<SnapshotEntry | null> {
  budget.entries -= 1;
  const stat = budget.entries >= 0 ? lstatQuietly(file) : await lstat(file, { bigint: true }).catch(() => null);
  if (stat === null) return null;
  const stamp = `${stat.mode}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  if (previous !== undefined && previous.stamp === stamp) return previous;
  const size = Number(stat.size);
  if (stat.isSymbolicLink()) return { sha256: sha256Of(`link:${await readlink(file)}`), regular: false, size, stamp };
  // A FIFO or a socket is never opened: reading one could block the service.
  if (!stat.isFile()) return { sha256: sha256Of(`special:${stat.mode}`), regular: false, size, stamp };
  const sha256 = await hashFile(file, size, budget).catch(() => null);
  return sha256 === null ? null : { sha256, regular: true, size, stamp };
}

async function hashFile(file: string, size: number, budget: SyncBudget): Promise<string> {
  if (size <= SYNC_FILE_BYTES && size <= budget.bytes) {
    budget.bytes -= size;
    return sha256Of(readRegularFileSync(file));
  }
  if (size <= STREAM_ABOVE_BYTES) return sha256Of(await readFile(file));
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export function sha256Of(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Workspace-relative paths added, changed or removed between two snapshots, sorted. */
export function changedPaths(before: Snapshot, after: Snapshot): string[] {
  const changed: string[] = [];
  for (const [relative, entry] of after) {
    if (before.get(relative)?.sha256 !== entry.sha256) changed.push(relative);
  }
  for (const relative of before.keys()) if (!after.has(relative)) changed.push(relative);
  return changed.sort();
}
