import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A file system mounted for the bench, removed with `remove()` (unmounted, its image deleted). */
export interface MountedFilesystem {
  dir: string;
  remove(): void;
}

/** Room for the trials' directories: they hold a few small files each, and go with their trial. */
const IMAGE_BYTES = 1024 * 1024 * 1024;

/**
 * A fresh ext4 with its journal, in a sparse file under the temporary directory, loop-mounted:
 * ext4 as mkfs.ext4 makes it by default. The machine's own root file system may not be one (this
 * one's has no journal, and ext4 without a journal searches past each inode freed in the last
 * seconds to make a new one: bench/results/2026-11-26-throughput.md, tenth pass). Its inode
 * tables and journal are written whole at once, so no background initialisation runs through the
 * measured batches.
 * Needs root, mkfs.ext4 and loop devices; without them, the reason.
 */
export function mountJournaledExt4(): MountedFilesystem | { unavailable: string } {
  if (process.getuid?.() !== 0) return { unavailable: 'mounting a file system needs root' };
  // mkfs.ext4, mount and umount live in the sbin directories, which a root shell's PATH may lack.
  const env = { ...process.env, PATH: [process.env.PATH, '/usr/sbin', '/sbin'].filter(Boolean).join(path.delimiter) };
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-bench-ext4-'));
  const image = path.join(base, 'trials.img');
  const dir = path.join(base, 'mounted');
  fs.mkdirSync(dir);
  const removeBase = () => fs.rmSync(base, { recursive: true, force: true });
  try {
    fs.writeFileSync(image, '');
    fs.truncateSync(image, IMAGE_BYTES);
    execFileSync('mkfs.ext4', ['-q', '-F', '-O', 'has_journal', '-E', 'lazy_itable_init=0,lazy_journal_init=0', image], { stdio: 'pipe', env });
    execFileSync('mount', ['-o', 'loop', image, dir], { stdio: 'pipe', env });
  } catch (error) {
    removeBase();
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { unavailable: 'mkfs.ext4 or mount is not installed (Debian: e2fsprogs, mount)' };
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return { unavailable: `cannot make and mount a journaled ext4 here: ${stderr || (error as Error).message}` };
  }
  return {
    dir,
    remove() {
      try {
        execFileSync('umount', [dir], { stdio: 'pipe', env });
      } catch {
        // Busy for a moment after the last trial's processes: detached, it goes once they let go.
        execFileSync('umount', ['-l', dir], { stdio: 'pipe', env });
      }
      removeBase();
    },
  };
}
