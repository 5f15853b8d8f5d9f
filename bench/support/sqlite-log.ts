/**
 * The raw better-sqlite3 side of the baselines: the adapter's own schema (read back from a file
 * the adapter created, so that it cannot drift) under the pragmas the adapter sets, and a
 * writer that inserts the same rows with no checks, one IMMEDIATE transaction per batch.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import type { NewEvent } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';

/**
 * Per-connection pragmas cannot be read back from the file, so these mirror the adapter's
 * openDatabase(); the journal mode is persistent and is read from the adapter's file instead.
 */
const BUSY_TIMEOUT_MS = 5_000;
const SYNCHRONOUS = 'FULL';

export interface AdapterLayout {
  /** The CREATE statements of the adapter's tables and indexes, in creation order. */
  schema: string[];
  journalMode: string;
}

/** A temporary directory for one suite, removed by `remove()`. */
export function tempDir(label: string, under = os.tmpdir()): { dir: string; file(name: string): string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(under, `assay-bench-${label}-`));
  return {
    dir,
    file: (name) => path.join(dir, name),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** Lets the adapter create a log in `file`, then reads its schema and journal mode back. */
export async function adapterLayout(file: string): Promise<AdapterLayout> {
  await SqliteEventStore.open(file).close();
  const db = new Database(file, { readonly: true });
  try {
    const schema = db.prepare<[], string>("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite%' ORDER BY rowid").pluck().all();
    if (!schema.some((sql) => /CREATE TABLE\s+"?events"?/i.test(sql))) throw new Error(`No events table in ${file}.`);
    return { schema, journalMode: String(db.pragma('journal_mode', { simple: true })) };
  } finally {
    db.close();
  }
}

/** A connection to a new or existing log file with the adapter's schema and pragmas. */
export function openRawLog(file: string, layout: AdapterLayout): Database.Database {
  const fresh = !fs.existsSync(file);
  const db = new Database(file);
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma(`journal_mode = ${layout.journalMode}`);
  db.pragma(`synchronous = ${SYNCHRONOUS}`);
  if (fresh) for (const sql of layout.schema) db.exec(sql);
  return db;
}

/** The plain writer: serialise, insert, commit. No revision check, no idempotency lookup. */
export class RawLogWriter {
  private readonly insert: Database.Statement<[string, string, number, string, string, string, string]>;
  private readonly appendBatch: Database.Transaction<(stream: string, firstRevision: number, events: NewEvent[], createdAt: string) => void>;

  constructor(readonly db: Database.Database) {
    this.insert = db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.appendBatch = db.transaction((stream, firstRevision, events, createdAt) => {
      for (let index = 0; index < events.length; index++) {
        const event = events[index];
        this.insert.run(event.id, stream, firstRevision + index, event.type, JSON.stringify(event.data ?? null), JSON.stringify(event.metadata), createdAt);
      }
    });
  }

  /** One transaction, taking the write lock up front as the adapter does. */
  append(stream: string, firstRevision: number, events: NewEvent[]): void {
    this.appendBatch.immediate(stream, firstRevision, events, new Date().toISOString());
  }

  /** Many batches in one transaction: for seeding a log fast, not for measuring. */
  bulkLoad(entries: Iterable<{ stream: string; revision: number; event: NewEvent; createdAt: string }>): number {
    let count = 0;
    this.db
      .transaction(() => {
        for (const entry of entries) {
          const { event } = entry;
          this.insert.run(
            event.id,
            entry.stream,
            entry.revision,
            event.type,
            JSON.stringify(event.data ?? null),
            JSON.stringify(event.metadata),
            entry.createdAt,
          );
          count += 1;
        }
      })
      .immediate();
    return count;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
