import { mkdir, rm } from 'node:fs/promises';
import * as path from 'node:path';

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

export async function createTrialDirectory(trialsRoot: string, sandboxId: string): Promise<TrialDirectory> {
  const root = path.join(trialsRoot, sandboxId);
  await mkdir(trialsRoot, { recursive: true, mode: 0o700 });
  await mkdir(root, { mode: 0o700 });
  const directory = { root, workspace: path.join(root, 'workspace'), home: path.join(root, 'home'), tmp: path.join(root, 'tmp') };
  await Promise.all([mkdir(directory.workspace), mkdir(directory.home), mkdir(directory.tmp)]);
  return directory;
}

export async function removeTrialDirectory(directory: TrialDirectory): Promise<void> {
  await rm(directory.root, { recursive: true, force: true, maxRetries: 2 });
}
