import { randomBytes } from 'node:crypto';
import { Dirent, mkdirSync, readdirSync, renameSync, rmSync, truncateSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The control directories of the trials under one trials root, kept from one trial to the next.
 *
 * A trial with a user of its own has a control directory in its own directory: the service's,
 * readable by the trial, never writable by it, holding the trial's account files and its sandbox
 * session's step files (trial-directory.ts, sandbox-session.ts). Made afresh for every trial,
 * that is five new inodes a trial, and on a file system that makes new inodes slowly (ext4
 * without a journal searches past every inode freed in the last seconds) they cost more than the
 * rest of the trial's set-up. So a finished trial's control directory is emptied (each file cut
 * to nothing, so nothing of one trial is left for the next to read) and moved aside, and the next
 * trial's is that one moved in: a rename, no new inode.
 *
 * The spares live in the trials root, which sandboxes never see, and go as soon as no trial holds
 * a control directory: an idle server keeps none, and never more than it ran at once.
 */
export class ControlDirectories {
  private readonly spares: string[] = [];
  private readonly held = new Set<string>();

  constructor(private readonly trialsRoot: string) {}

  /** Puts a control directory at `target` (which must not exist): a spare moved in, or a new one. */
  place(target: string): void {
    this.held.add(target);
    for (let spare = this.spares.pop(); spare !== undefined; spare = this.spares.pop()) {
      try {
        renameSync(spare, target);
        return;
      } catch {
        // Gone, or not movable: the next spare, or a new directory.
        rmSync(spare, { recursive: true, force: true });
      }
    }
    mkdirSync(target, { mode: 0o755 });
  }

  /**
   * Takes back a trial's control directory once nothing of the trial runs any more, before its
   * directory is removed. Emptied and kept as a spare when it holds only files (only the service
   * writes there); otherwise it is left to go with the trial's directory. A directory not placed
   * here (or given back already) is left alone.
   */
  release(control: string): void {
    if (!this.held.delete(control)) return;
    const spare = path.join(this.trialsRoot, `.control-${randomBytes(8).toString('hex')}`);
    if (emptyFiles(control)) {
      try {
        renameSync(control, spare);
        this.spares.push(spare);
      } catch {
        // Left to go with the trial's directory.
      }
    }
    if (this.held.size === 0) this.removeSpares();
  }

  /** How many spares are kept now (for tests). */
  get spareCount(): number {
    return this.spares.length;
  }

  private removeSpares(): void {
    for (const spare of this.spares.splice(0)) rmSync(spare, { recursive: true, force: true });
  }
}

/** Cuts every file of the directory to nothing; false when it holds anything but files (or cannot be read). */
function emptyFiles(directory: string): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return false;
  }
  if (!entries.every((entry) => entry.isFile())) return false;
  try {
    for (const entry of entries) truncateSync(path.join(directory, entry.name));
    return true;
  } catch {
    return false;
  }
}
