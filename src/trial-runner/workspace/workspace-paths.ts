import * as path from 'node:path';
import { FileCalls, POOL_CALLS, SYNC_CALLS, SYNC_FILE_BYTES } from './file-calls';

/**
 * The service writes into a workspace as itself, outside any sandbox (source files, profile
 * files, the cache). A workspace may hold symbolic links from an untrusted repository or from
 * an earlier step, so every write refuses to go through one: otherwise a link such as
 * `config -> /etc` would let a case write anywhere on the host.
 */
export class WorkspacePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspacePathError';
  }
}

/** The absolute path of a workspace-relative path; absolute paths and `..` escapes are refused. */
export function workspacePath(workspace: string, relative: string): string {
  const normalized = path.posix.normalize(relative.replace(/\\/g, '/'));
  if (relative === '' || path.posix.isAbsolute(relative)) {
    throw new WorkspacePathError(`path ${JSON.stringify(relative)} must be relative to the workspace`);
  }
  if (normalized === '.' || normalized === '..' || normalized.startsWith('../')) {
    throw new WorkspacePathError(`path ${JSON.stringify(relative)} must stay inside the workspace`);
  }
  return path.join(workspace, normalized);
}

/** Creates the parent directories of `target`, refusing any that is a symbolic link or a file. */
export async function ensureParents(workspace: string, target: string, calls: FileCalls = POOL_CALLS): Promise<void> {
  const parts = path
    .relative(workspace, path.dirname(target))
    .split(path.sep)
    .filter((part) => part !== '');
  let current = workspace;
  for (const part of parts) {
    current = path.join(current, part);
    const stat = await calls.lstat(current);
    if (stat === null) await calls.mkdir(current);
    else if (!stat.isDirectory()) {
      throw new WorkspacePathError(`${path.relative(workspace, current)} is not a directory (a link or a file is in the way)`);
    }
  }
}

/**
 * Writes a file at a workspace-relative path, creating its directories; a link in its place is
 * replaced. A small file is written with synchronous calls (file-calls.ts) unless `pooled`: a
 * caller writing many files has only the first few written so.
 */
export async function writeWorkspaceFile(workspace: string, relative: string, content: string, pooled = false): Promise<void> {
  const target = workspacePath(workspace, relative);
  const calls = !pooled && Buffer.byteLength(content) <= SYNC_FILE_BYTES ? SYNC_CALLS : POOL_CALLS;
  await ensureParents(workspace, target, calls);
  const existing = await calls.lstat(target);
  if (existing?.isDirectory()) throw new WorkspacePathError(`${relative} is a directory`);
  if (existing?.isSymbolicLink()) await calls.rm(target);
  await calls.writeFile(target, content);
}
