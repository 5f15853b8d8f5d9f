import { lchown, lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  /** The sandbox session's control directory (sandbox-session.ts): the service's, made by the session. */
  control: string;
}

/** The control directory's name in the trial's directory. */
const CONTROL = '.session';

/**
 * The workspace, home and tmp belong to the trial's user, when it has one: the only places it
 * can write. The directory holding them stays the service's (readable, not writable, by the
 * trial): what the service keeps there (the account files, a session's control directory, a
 * validator's files) cannot be renamed or replaced by the trial under the service's feet. Made
 * in as few rounds of file system calls as it can (each round waits on the thread pool, which the
 * other trials' snapshots and removals share): it is on the way from a freed place to the next
 * trial's first process.
 */
export async function createTrialDirectory(trialsRoot: string, sandboxId: string, user: TrialUser | null): Promise<TrialDirectory> {
  const root = path.join(trialsRoot, sandboxId);
  // The trials root (0700) keeps other host users out; the trial's user must traverse its own.
  const mode = user === null ? 0o700 : 0o755;
  await mkdir(root, { mode }).catch(async (error: unknown) => {
    // The trials root is made once, by the first trial (or again, had it been removed).
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(trialsRoot, { recursive: true, mode: 0o700 });
    await mkdir(root, { mode });
  });
  const directory = {
    root,
    workspace: path.join(root, 'workspace'),
    home: path.join(root, 'home'),
    tmp: path.join(root, 'tmp'),
    control: path.join(root, CONTROL),
  };
  const made = [directory.workspace, directory.home, directory.tmp];
  await Promise.all([...made.map((child) => mkdir(child)), ...(user === null ? [] : [writeAccount(directory, user)])]);
  // Nothing else is in them (the service just made them): every entry is known.
  if (user !== null) await Promise.all(made.map((entry) => lchown(entry, user.uid, user.gid)));
  return directory;
}

/** The name the trial's user has in its sandbox. */
export const TRIAL_ACCOUNT = 'assay-trial';

function accountFiles(directory: TrialDirectory): [string, string] {
  return [path.join(directory.root, 'passwd'), path.join(directory.root, 'group')];
}

/**
 * The host's passwd and group files with the trial's user added, which the sandbox shows as its
 * /etc/passwd and /etc/group: programs that look their user up (whoami, ssh, node's
 * os.userInfo, git's default identity) find one. Beside the workspace, so never a changed file.
 */
async function writeAccount(directory: TrialDirectory, user: TrialUser): Promise<void> {
  const hostFile = (file: string) =>
    readFile(file, 'utf8').then(
      (text) => (text === '' || text.endsWith('\n') ? text : `${text}\n`),
      () => '',
    );
  const [hostPasswd, hostGroup] = await Promise.all([hostFile('/etc/passwd'), hostFile('/etc/group')]);
  const [passwdFile, groupFile] = accountFiles(directory);
  await Promise.all([
    writeFile(passwdFile, `${hostPasswd}${TRIAL_ACCOUNT}:x:${user.uid}:${user.gid}:Assay trial:${directory.home}:/bin/sh\n`, { mode: 0o644 }),
    writeFile(groupFile, `${hostGroup}${TRIAL_ACCOUNT}:x:${user.gid}:\n`, { mode: 0o644 }),
  ]);
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

/** What the trial's files take (workspace, home, TMPDIR), less the service's control directory. */
export function trialDiskUsage(directory: TrialDirectory): Promise<number> {
  return diskUsage(directory.root, new Set([directory.control]));
}

/** The disk space a directory's files take (allocated blocks, so a sparse file counts what it holds). */
export async function diskUsage(directory: string, skipped: ReadonlySet<string> = new Set()): Promise<number> {
  let total = 0;
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const child = path.join(directory, entry.name);
    if (skipped.has(child)) continue;
    if (entry.isDirectory()) total += await diskUsage(child, skipped);
    const found = await lstat(child).catch(() => null);
    total += found === null ? 0 : found.blocks * 512;
  }
  return total;
}

export async function removeTrialDirectory(directory: TrialDirectory): Promise<void> {
  await rm(directory.root, { recursive: true, force: true, maxRetries: 2 });
}
