import Database from 'better-sqlite3';

/**
 * A lock that dies with its process: an empty SQLite file in rollback-journal mode. Holding it
 * shared is an open read transaction (SQLite's SHARED lock, an fcntl lock on the file), which
 * any number of processes can hold together; holding it exclusive is `BEGIN EXCLUSIVE`, which
 * succeeds only while nobody holds it shared. The kernel drops fcntl locks when a process exits
 * however it exits (SIGKILL too), so a dead holder never blocks anyone: no pid file to judge.
 */
export interface HeldLock {
  readonly file: string;
  release(): void;
}

export class LockBusy extends Error {
  constructor(readonly file: string) {
    super(`${file} is locked by another process`);
    this.name = 'LockBusy';
  }
}

/** Holds `file` shared for as long as the lock is not released; LockBusy while someone holds it exclusive. */
export function holdShared(file: string): HeldLock {
  return hold(file, (db) => {
    db.exec('BEGIN');
    // A read takes the SHARED lock; the open transaction keeps it.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  });
}

/** Holds `file` exclusive; LockBusy while anyone (this process too) holds it shared. */
export function holdExclusive(file: string): HeldLock {
  return hold(file, (db) => db.exec('BEGIN EXCLUSIVE'));
}

function hold(file: string, take: (db: Database.Database) => void): HeldLock {
  const db = new Database(file, { timeout: 0 });
  try {
    take(db);
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw new LockBusy(file);
    throw error;
  }
  let held = true;
  return {
    file,
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
