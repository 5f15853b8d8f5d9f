import type Database from 'better-sqlite3';
import type { AuditedEvent, OrganizationReadOptions } from '../event-store.port';
import { EventRow, toRecordedEvent } from './sqlite-rows';

/**
 * The audit's part of the SQLite log: each row names its organization (copied from the
 * metadata, so one organization's events are read through an index) and holds its link in the
 * organization's hash chain (`prev_hash`, `hash`; see #shared/event-chain). Logs written before
 * these columns existed are migrated in place: their rows get their organization and no hash.
 */
export function migrateForAudit(db: Database.Database): void {
  const migrated = () =>
    db
      .prepare<[], { name: string }>('PRAGMA table_info(events)')
      .all()
      .some((column) => column.name === 'organization');
  if (!migrated()) {
    db.transaction(() => {
      // Asked again under the write lock: another process opening the same new file may have just done it.
      if (migrated()) return;
      db.exec('ALTER TABLE events ADD COLUMN organization TEXT');
      db.exec('ALTER TABLE events ADD COLUMN prev_hash TEXT');
      db.exec('ALTER TABLE events ADD COLUMN hash TEXT');
      db.exec(`UPDATE events SET organization = json_extract(metadata, '$.organization')`);
    }).immediate();
  }
  db.exec('CREATE INDEX IF NOT EXISTS events_by_organization ON events (organization, position)');
}

/** An organization's chain head: its last chained event, where it is and its hash. */
export interface ChainHead {
  hash: string;
  position: number;
  stream: string;
  revision: number;
}

/**
 * Each organization's chain head, kept apart from the event rows (in the same transaction as
 * the append that moves it), so that deleting the newest rows shows: the head then names an event
 * the log no longer holds. A log written before the table existed gets it filled from its rows,
 * once, in one pass over the organization index.
 */
export function migrateChainHeads(db: Database.Database): void {
  const exists = () => db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'chain_heads'").get() !== undefined;
  if (exists()) return;
  db.transaction(() => {
    if (exists()) return;
    db.exec(
      'CREATE TABLE chain_heads (organization TEXT PRIMARY KEY, hash TEXT NOT NULL, position INTEGER NOT NULL, stream TEXT NOT NULL, revision INTEGER NOT NULL)',
    );
    db.exec(`
      INSERT INTO chain_heads (organization, hash, position, stream, revision)
      SELECT events.organization, events.hash, events.position, events.stream, events.revision
      FROM events JOIN (
        SELECT organization, max(position) AS position FROM events WHERE organization IS NOT NULL AND hash IS NOT NULL GROUP BY organization
      ) AS last ON events.position = last.position`);
  }).immediate();
}

export interface AuditRow extends EventRow {
  prev_hash: string | null;
  hash: string | null;
}

/** The statement and parameters of one page of an organization's events. */
export function organizationQuery(options: OrganizationReadOptions): { sql: string; parameters: Array<string | number> } {
  const conditions = ['organization = ?', 'position > ?'];
  const parameters: Array<string | number> = [options.organization, options.after ?? -1];
  if (options.stream !== undefined) {
    conditions.push('stream = ?');
    parameters.push(options.stream);
  }
  if (options.categories !== undefined && options.categories.length > 0) {
    // A category is the text before the first '-': "batch" matches "batch-…", never "batches-…".
    conditions.push(`(${options.categories.map(() => 'substr(stream, 1, length(?) + 1) = ?').join(' OR ')})`);
    for (const category of options.categories) parameters.push(category, `${category}-`);
  }
  if (options.type !== undefined) {
    conditions.push('type = ?');
    parameters.push(options.type);
  }
  if (options.actor !== undefined) {
    conditions.push(`json_extract(metadata, '$.actor') = ?`);
    parameters.push(options.actor);
  }
  if (options.from !== undefined) {
    conditions.push('created_at >= ?');
    parameters.push(options.from);
  }
  if (options.to !== undefined) {
    conditions.push('created_at <= ?');
    parameters.push(options.to);
  }
  parameters.push(options.maxCount);
  const sql =
    'SELECT position, id, stream, revision, type, data, metadata, created_at, prev_hash, hash FROM events INDEXED BY events_by_organization ' +
    `WHERE ${conditions.join(' AND ')} ORDER BY position ASC LIMIT ?`;
  return { sql, parameters };
}

export function toAuditedEvent(row: AuditRow): AuditedEvent {
  return { ...toRecordedEvent(row), chain: row.hash === null ? null : { prevHash: row.prev_hash, hash: row.hash } };
}
