import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { HeldLock, holdExclusive, holdShared, LockBusy } from '#infrastructure/locks/sqlite-lock';
import { killRecordedGroups, PROCESS_GROUPS_FILE } from '#trial-runner';

/**
 * This server instance's own directory for trial directories, `<tmpdir>/assay-trials/inst_<id>/`,
 * with `instance.lock` inside held for the instance's life. A server killed mid-trial leaves its
 * trials' directories behind; the next start removes every instance directory whose lock is
 * free (its holder is dead), and never one whose lock is held (another live instance). Before
 * that it kills what the dead instance's trials left running, from the list its process guardian
 * kept there (`process-groups`): the guardian kills them itself unless it was killed too.
 */
export interface TrialsRoot {
  /** Where this instance makes its trial directories. */
  readonly directory: string;
  /** Every instance's directory is here: hidden from sandboxes as a whole. */
  readonly parent: string;
  /** Removes this instance's directory and gives up its lock (at a clean stop). */
  close(): void;
}

const LOCK_FILE = 'instance.lock';
const INSTANCE = /^inst_[0-9a-f]{16}$/;

export function defaultTrialsParent(): string {
  return path.join(tmpdir(), 'assay-trials');
}

/** Removes the directories of dead instances, then claims a new one for this instance. */
export function claimTrialsRoot(parent = defaultTrialsParent()): { root: TrialsRoot; removed: string[] } {
  fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
  const removed = removeDeadInstances(parent);
  for (let attempt = 0; ; attempt += 1) {
    const directory = path.join(parent, `inst_${randomBytes(8).toString('hex')}`);
    fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
    try {
      fs.mkdirSync(directory, { mode: 0o700 });
    } catch (error) {
      // A stopping instance removed the (then empty) parent between the two calls.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 4) continue;
      throw error;
    }
    const lock = holdShared(path.join(directory, LOCK_FILE));
    // Another start may have judged it dead between the mkdir and the lock and removed it.
    if (fs.existsSync(lock.file)) return { root: ownedRoot(directory, parent, lock), removed };
    lock.release();
    if (attempt >= 4) throw new Error(`cannot claim a trials directory under ${parent}: it keeps disappearing`);
  }
}

/** Each instance directory whose lock can be taken exclusive belongs to a dead instance: its processes are killed, its directory removed. */
export function removeDeadInstances(parent: string): string[] {
  const removed: string[] = [];
  for (const name of fs.readdirSync(parent)) {
    const directory = path.join(parent, name);
    const lockFile = path.join(directory, LOCK_FILE);
    // Without its lock file yet, the directory is being claimed right now.
    if (!INSTANCE.test(name) || !fs.existsSync(lockFile)) continue;
    let lock: HeldLock;
    try {
      lock = holdExclusive(lockFile);
    } catch (error) {
      if (error instanceof LockBusy) continue;
      throw error;
    }
    try {
      killRecordedGroups(path.join(directory, PROCESS_GROUPS_FILE));
      fs.rmSync(directory, { recursive: true, force: true, maxRetries: 2 });
      removed.push(directory);
    } finally {
      lock.release();
    }
  }
  return removed;
}

function ownedRoot(directory: string, parent: string, lock: HeldLock): TrialsRoot {
  return {
    directory,
    parent,
    close() {
      fs.rmSync(directory, { recursive: true, force: true, maxRetries: 2 });
      lock.release();
      try {
        fs.rmdirSync(parent);
      } catch {
        // Another instance's directory is still there.
      }
    },
  };
}
