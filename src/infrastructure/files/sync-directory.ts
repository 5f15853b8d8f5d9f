import * as fs from 'node:fs';

/**
 * Makes a change of a directory's entries (a rename, a link, a new file) durable: the entries are
 * the directory's data, synced apart from the files they name.
 */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await fs.promises.open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The same, for code that runs before the event loop serves anything (the master key at start). */
export function syncDirectorySync(directory: string): void {
  const fd = fs.openSync(directory, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
