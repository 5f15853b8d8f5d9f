import * as fs from 'node:fs';
import * as path from 'node:path';
import { HeldLock, holdExclusive, holdShared, LockBusy } from './sqlite-lock';

/** In the data directory: held shared by every server using it, exclusive by maintenance commands. */
export const SERVER_LOCK_FILE = 'server.lock';

export function serverLockPath(dataDir: string): string {
  return path.join(dataDir, SERVER_LOCK_FILE);
}

/**
 * Held by a server for its whole life. Servers share it (several may use one data directory);
 * it is refused only while a maintenance command such as `assay keys rotate-master` holds it.
 */
export function holdDataDirectory(dataDir: string): HeldLock {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    return holdShared(serverLockPath(dataDir));
  } catch (error) {
    if (!(error instanceof LockBusy)) throw error;
    throw new Error(`A maintenance command (assay keys rotate-master) is running on ${dataDir}: start the server when it has finished.`);
  }
}

/**
 * Held by a maintenance command that must not run beside a server; refused while any server
 * holds the data directory. `force` skips the lock (the operator knows the servers are gone).
 */
export function holdDataDirectoryAlone(dataDir: string, force: boolean, command: string): HeldLock | null {
  if (force) return null;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    return holdExclusive(serverLockPath(dataDir));
  } catch (error) {
    if (!(error instanceof LockBusy)) throw error;
    throw new DataDirectoryInUse(
      `A server is running on ${dataDir} (it holds ${serverLockPath(dataDir)}): stop every server using it before "${command}", ` +
        'or pass --force if you are sure none is running.',
    );
  }
}

export class DataDirectoryInUse extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirectoryInUse';
  }
}
