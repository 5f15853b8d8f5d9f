import { lchown, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import * as path from 'node:path';
import type { TrialUser } from '../sandbox/trial-user';

/**
 * A trial's own directory under the trials root, outside the data directory: the workspace the
 * agent works in, and a home and a tmp of its own (so nothing the tools write to $HOME or $TMPDIR
 * leaks into the workspace's changed files or into another trial). Removed after the trial.
 */
export interface TrialDirectory {
  root: string;
  workspace: string;
  home: string;
  tmp: string;
}

/** The directory belongs to the trial's user, when it has one: the only place it can write. */
export async function createTrialDirectory(trialsRoot: string, sandboxId: string, user: TrialUser | null): Promise<TrialDirectory> {
  const root = path.join(trialsRoot, sandboxId);
  await mkdir(trialsRoot, { recursive: true, mode: 0o700 });
  await mkdir(root, { mode: 0o700 });
  const directory = { root, workspace: path.join(root, 'workspace'), home: path.join(root, 'home'), tmp: path.join(root, 'tmp') };
  await Promise.all([mkdir(directory.workspace), mkdir(directory.home), mkdir(directory.tmp)]);
  await handOver(root, user);
  return directory;
}

/**
 * Gives what the service wrote in the trial's directory (source files, the cache, the profile's
 * files) to the trial's user. Links are changed, never followed, and never descended into.
 */
export async function handOver(directory: string, user: TrialUser | null): Promise<void> {
  if (user === null) return;
  await lchown(directory, user.uid, user.gid);
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const child = path.join(directory, entry.name);
    if (entry.isDirectory()) await handOver(child, user);
    else await lchown(child, user.uid, user.gid);
  }
}

/** The disk space a directory's files take (allocated blocks, so a sparse file counts what it holds). */
export async function diskUsage(directory: string): Promise<number> {
  let total = 0;
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const child = path.join(directory, entry.name);
    if (entry.isDirectory()) total += await diskUsage(child);
    const found = await lstat(child).catch(() => null);
    total += found === null ? 0 : found.blocks * 512;
  }
  return total;
}

export async function removeTrialDirectory(directory: TrialDirectory): Promise<void> {
  await rm(directory.root, { recursive: true, force: true, maxRetries: 2 });
}
