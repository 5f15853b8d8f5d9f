import { execFileSync } from 'node:child_process';
import { Dirent, lchownSync, mkdirSync, readdirSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { lchown, lstat, readdir, readFile, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { findHostTool } from '../sandbox/host-tools';
import type { TrialUser } from '../sandbox/trial-user';
import { POOL_CALLS, readdirQuietly, SYNC_CALLS, SYNC_WALK_ENTRIES } from './file-calls';

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
  /**
   * The service's files the trial reads (its account files, its sandbox session's step files):
   * there when the trial has a user of its own.
   */
  control: string;
}

/** The control directory's name in the trial's directory. */
const CONTROL = '.session';

/**
 * The workspace, home and tmp belong to the trial's user, when it has one: the only places it
 * can write. The directory holding them stays the service's (readable, not writable, by the
 * trial): what the service keeps there (the control directory with the account files and a
 * session's step files, a validator's files) cannot be renamed or replaced by the trial under the
 * service's feet. Each trial's control directory is made new: nothing of one trial's is passed
 * to the next.
 *
 * Made with synchronous calls: a fixed handful (five directories, two small account files, three
 * lchowns) on the way from a freed place to the trial's first
 * process. Each asynchronous call would wait for a thread of the pool and then for its turn on
 * the event loop, behind whatever the server is doing for the other trials; measured, that made
 * this step 5–20 ms instead of well under one.
 */
export async function createTrialDirectory(trialsRoot: string, sandboxId: string, user: TrialUser | null): Promise<TrialDirectory> {
  const accounts = user === null ? null : await hostAccounts();
  const root = path.join(trialsRoot, sandboxId);
  // The trials root (0700) keeps other host users out; the trial's user must traverse its own.
  const mode = user === null ? 0o700 : 0o755;
  try {
    mkdirSync(root, { mode });
  } catch (error) {
    // The trials root is made once, by the first trial (or again, had it been removed).
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(trialsRoot, { recursive: true, mode: 0o700 });
    spreadTrialDirectories(trialsRoot);
    mkdirSync(root, { mode });
  }
  const directory = {
    root,
    workspace: path.join(root, 'workspace'),
    home: path.join(root, 'home'),
    tmp: path.join(root, 'tmp'),
    control: path.join(root, CONTROL),
  };
  const made = [directory.workspace, directory.home, directory.tmp];
  for (const child of made) mkdirSync(child);
  if (user === null || accounts === null) return directory;
  try {
    mkdirSync(directory.control, { mode: 0o755 });
    writeAccount(directory, user, accounts);
    // Nothing else is in them (the service just made them): every entry is known.
    for (const entry of made) lchownSync(entry, user.uid, user.gid);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return directory;
}

/**
 * Marks the trials root as a top of directory hierarchies for ext2/3/4's Orlov allocator
 * (`chattr +T`): the trials' directories are unrelated to each other, so each new one goes to a
 * block group of its own choosing instead of the root's. What matters is ext4 without a journal,
 * which will not reuse an inode freed in the last seconds and reads past each such inode to make
 * a new one: with every trial's directories in the same few groups, each trial paid for the
 * inodes of the hundreds removed just before it (decision record 0048). A no-op where
 * the flag means nothing (tmpfs, XFS, overlay) or chattr is missing.
 */
export function spreadTrialDirectories(trialsRoot: string): void {
  const chattr = findHostTool('chattr');
  if (chattr === null) return;
  try {
    execFileSync(chattr, ['+T', trialsRoot], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // Not a file system with the flag: the directories go where its allocator puts them.
  }
}

/** The name the trial's user has in its sandbox. */
export const TRIAL_ACCOUNT = 'assay-trial';

/** The trial's passwd and group, in its control directory: bound over /etc/passwd and /etc/group when they are there. */
export function accountFiles(trialRoot: string): [string, string] {
  return [path.join(trialRoot, CONTROL, 'passwd'), path.join(trialRoot, CONTROL, 'group')];
}

/**
 * The host's passwd and group files with the trial's user added, which the sandbox shows as its
 * /etc/passwd and /etc/group: programs that look their user up (whoami, ssh, node's
 * os.userInfo, git's default identity) find one. Beside the workspace, so never a changed file.
 */
function writeAccount(directory: TrialDirectory, user: TrialUser, [hostPasswd, hostGroup]: [string, string]): void {
  const [passwdFile, groupFile] = accountFiles(directory.root);
  writeFileSync(passwdFile, `${hostPasswd}${TRIAL_ACCOUNT}:x:${user.uid}:${user.gid}:Assay trial:${directory.home}:/bin/sh\n`, { mode: 0o644 });
  writeFileSync(groupFile, `${hostGroup}${TRIAL_ACCOUNT}:x:${user.gid}:\n`, { mode: 0o644 });
}

/** How long the host's passwd and group are reused: accounts added on the host show in sandboxes that much later. */
const HOST_ACCOUNTS_TTL_MS = 60_000;
let hostAccountsRead: { at: number; files: Promise<[string, string]> } | null = null;

/** The host's passwd and group, read at most once a minute: every trial's account files start with them. */
function hostAccounts(): Promise<[string, string]> {
  const now = Date.now();
  if (hostAccountsRead === null || now - hostAccountsRead.at > HOST_ACCOUNTS_TTL_MS) {
    const hostFile = (file: string) =>
      readFile(file, 'utf8').then(
        (text) => (text === '' || text.endsWith('\n') ? text : `${text}\n`),
        () => '',
      );
    hostAccountsRead = { at: now, files: Promise.all([hostFile('/etc/passwd'), hostFile('/etc/group')]) };
  }
  return hostAccountsRead.files;
}

/**
 * Gives what the service wrote in the workspace to the trial's user: each written file and the
 * directories above it, and each tree it copied (the restored cache) whole. What the trial's own
 * commands made (a clone) is the user's already and is not walked. Links are changed, never
 * followed, and never descended into.
 */
export async function handOverWritten(
  workspace: string,
  written: { files: readonly string[]; trees: readonly string[] },
  user: TrialUser | null,
): Promise<void> {
  if (user === null) return;
  const entries = new Set<string>();
  for (const relative of [...written.files, ...written.trees]) {
    const parts = path.relative(workspace, relative).split(path.sep);
    for (let depth = 1; depth <= parts.length; depth++) entries.add(path.join(workspace, ...parts.slice(0, depth)));
  }
  await Promise.all([...entries].map((entry) => lchown(entry, user.uid, user.gid).catch(ignoreMissing)));
  for (const tree of written.trees) await handOver(tree, user);
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}

/**
 * Gives a directory the service wrote (and all in it) to the trial's user. Links are changed,
 * never followed, and never descended into. The first SYNC_WALK_ENTRIES entries are handed over
 * with synchronous calls (the conversation's directory, a small cache), the rest through the
 * thread pool.
 */
export async function handOver(directory: string, user: TrialUser | null): Promise<void> {
  if (user === null) return;
  await handOverWithin(directory, user, { budget: SYNC_WALK_ENTRIES });
}

async function handOverWithin(directory: string, user: TrialUser, walk: { budget: number }): Promise<void> {
  const calls = walk.budget > 0 ? SYNC_CALLS : POOL_CALLS;
  await calls.lchown(directory, user.uid, user.gid);
  for (const entry of await calls.readdir(directory)) {
    walk.budget -= 1;
    const child = path.join(directory, entry.name);
    if (entry.isDirectory()) await handOverWithin(child, user, walk);
    else await (walk.budget > 0 ? SYNC_CALLS : POOL_CALLS).lchown(child, user.uid, user.gid);
  }
}

/** What the trial's files take (workspace, home, TMPDIR), less the service's control directory. */
export function trialDiskUsage(directory: TrialDirectory): Promise<number> {
  return diskUsage(directory.root, new Set([directory.control]));
}

/**
 * The disk space a directory's files take (allocated blocks, so a sparse file counts what it holds).
 * The first SYNC_WALK_ENTRIES entries are read synchronously: a trial's directory is usually a
 * handful of entries, which the thread pool's round trips (two per entry) cost more than reading;
 * a larger tree goes on asynchronously, so the event loop waits for a bounded part only.
 */
export async function diskUsage(directory: string, skipped: ReadonlySet<string> = new Set()): Promise<number> {
  const walk = { budget: SYNC_WALK_ENTRIES };
  return usageOf(directory, skipped, walk);
}

async function usageOf(directory: string, skipped: ReadonlySet<string>, walk: { budget: number }): Promise<number> {
  let total = 0;
  const entries = walk.budget > 0 ? readdirQuietly(directory) : await readdir(directory, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const child = path.join(directory, entry.name);
    if (skipped.has(child)) continue;
    if (entry.isDirectory()) total += await usageOf(child, skipped, walk);
    walk.budget -= 1;
    const found = walk.budget > 0 ? SYNC_CALLS.lstat(child) : await lstat(child).catch(() => null);
    total += found === null ? 0 : found.blocks * 512;
  }
  return total;
}

/**
 * Removes the trial's directory. A trial's directory is usually a handful of entries: they are
 * removed with synchronous calls, one readdir per directory and one unlink or rmdir per entry
 * (Node's recursive rm also lstats each entry and first tries rmdir on every directory, and each
 * call waits for a pool thread and then a turn of the event loop). A larger tree, or anything
 * unexpected (a file of unknown type, an entry that will not go, a process still writing), is
 * left to the recursive rm through the pool, which retries.
 */
export async function removeTrialDirectory(directory: TrialDirectory): Promise<void> {
  if (removeSmallTree(directory.root, { budget: SYNC_WALK_ENTRIES })) return;
  await rm(directory.root, { recursive: true, force: true, maxRetries: 2 });
}

/** True once the directory is gone; false, having removed part of it maybe, when the rest is for rm. Links are unlinked, never followed. */
function removeSmallTree(directory: string, walk: { budget: number }): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  walk.budget -= entries.length;
  if (walk.budget < 0) return false;
  for (const entry of entries) {
    const child = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      if (!removeSmallTree(child, walk)) return false;
    } else if (!gone(() => unlinkSync(child))) return false;
  }
  return gone(() => rmdirSync(directory));
}

function gone(remove: () => void): boolean {
  try {
    remove();
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
