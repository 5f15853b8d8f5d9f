import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { syncDirectory } from '../../files/sync-directory';
import { BlobMissing, BlobStore, requireSha256, sha256Of, verified } from '../blob-store.port';

/** The directory of the data directory that holds the blobs. */
export const BLOBS_DIRECTORY = 'blobs';

/**
 * The embedded blob store: one file per blob at `<root>/ab/cdef…` (the first two hex digits name
 * the directory, so no directory grows past 1/256 of the blobs). A blob is written to a temporary
 * name, fsync'd, renamed into place and its directory fsync'd: a crash leaves either no blob or a
 * whole one, and a put that returned survives a power cut. Several processes may share the
 * directory: a rename over an equal file changes nothing.
 */
export class FileBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  /** The blob store of a data directory. */
  static inDataDirectory(dataDir: string): FileBlobStore {
    return new FileBlobStore(path.join(dataDir, BLOBS_DIRECTORY));
  }

  async put(bytes: Uint8Array): Promise<string> {
    const sha256 = sha256Of(bytes);
    const target = this.pathOf(sha256);
    if (await exists(target)) return sha256;
    const directory = path.dirname(target);
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const temporary = path.join(directory, `.tmp-${randomBytes(8).toString('hex')}`);
    try {
      const file = await open(temporary, 'wx', 0o600);
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, target);
    } finally {
      await rm(temporary, { force: true });
    }
    await syncDirectory(directory);
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    const bytes = await readFile(this.pathOf(sha256)).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobMissing(sha256);
      throw error;
    });
    return verified(sha256, bytes);
  }

  async has(sha256: string): Promise<boolean> {
    return exists(this.pathOf(sha256));
  }

  async close(): Promise<void> {
    // Nothing is held open between calls.
  }

  private pathOf(sha256: string): string {
    requireSha256(sha256);
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2));
  }
}

function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
