import {
  closeSync,
  constants,
  Dirent,
  fstatSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  Stats,
  writeFileSync,
} from 'node:fs';
import { lchown, lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';

/**
 * The file system calls of the trial's small set-up steps, made either synchronously or through
 * libuv's thread pool, behind one interface so each step is written once. A step awaits the
 * answer either way; the synchronous calls answer at once, without waiting for a pool thread and
 * then for a turn of the event loop behind whatever the server is doing for the other trials.
 * They are for bounded work only (a few entries, a small file): a large tree or file goes
 * through the pool, so the event loop never waits on it for long.
 */
export interface FileCalls {
  /** The entry's lstat, or null when it does not exist (or cannot be read). */
  lstat(file: string): Stats | null | Promise<Stats | null>;
  readdir(directory: string): Dirent[] | Promise<Dirent[]>;
  mkdir(directory: string): unknown;
  lchown(file: string, uid: number, gid: number): unknown;
  rm(file: string): unknown;
  writeFile(file: string, content: string): unknown;
}

export const SYNC_CALLS = {
  lstat: (file: string): Stats | null => {
    try {
      return lstatSync(file);
    } catch {
      return null;
    }
  },
  readdir: (directory: string): Dirent[] => readdirSync(directory, { withFileTypes: true }),
  mkdir: (directory: string) => mkdirSync(directory),
  lchown: (file: string, uid: number, gid: number) => lchownSync(file, uid, gid),
  rm: (file: string) => rmSync(file),
  writeFile: (file: string, content: string) => writeFileSync(file, content),
} satisfies FileCalls;

export const POOL_CALLS: FileCalls = {
  lstat: (file) => lstat(file).catch(() => null),
  readdir: (directory) => readdir(directory, { withFileTypes: true }),
  mkdir: (directory) => mkdir(directory),
  lchown: (file, uid, gid) => lchown(file, uid, gid),
  rm: (file) => rm(file),
  writeFile: (file, content) => writeFile(file, content),
};

/** Up to this size a file is written or read synchronously (a conversation file, a profile's config). */
export const SYNC_FILE_BYTES = 64 * 1024;

/** Up to this many entries of a walk are read synchronously. */
export const SYNC_WALK_ENTRIES = 256;

/** A directory's entries, read synchronously; none when it is gone or cannot be read. */
export function readdirQuietly(directory: string): Dirent[] {
  try {
    return readdirSync(directory, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * A regular file's content, read synchronously. Opened without following a link and without
 * blocking, and checked on the open descriptor: a file swapped for a FIFO since its lstat cannot
 * hold the event loop.
 */
export function readRegularFileSync(file: string): Buffer {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${file} is no longer a regular file`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
