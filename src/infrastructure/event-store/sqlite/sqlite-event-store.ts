import Database from 'better-sqlite3';
import { closeSync, fsync, openSync } from 'node:fs';
import { ChainKey, linkHash } from '#shared/event-chain';
import {
  isLiveness,
  AllSubscription,
  AppendResult,
  AuditedEvent,
  ChainEnd,
  EventStore,
  ExpectedRevision,
  IdempotencyViolation,
  NewEvent,
  OrganizationReadOptions,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
  WrongExpectedVersion,
} from '../event-store.port';
import { AuditRow, ChainHead, migrateChainHeads, migrateForAudit, organizationQuery, toAuditedEvent } from './sqlite-audit';
import { EventRow, toRecordedEvent } from './sqlite-rows';

export interface SqliteEventStoreOptions {
  /** How often an idle subscription looks for events appended by other processes or instances. */
  pollIntervalMs?: number;
  /** Syncs the log's write-ahead file to disk (a file descriptor of it); fsync in libuv's pool unless given. */
  syncFile?: (fd: number) => Promise<void>;
  /** The key the organizations' chain links are computed under; without one (tests, tools) links are unkeyed sha256. */
  chainKey?: ChainKey;
}

const syncInPool = (fd: number): Promise<void> => new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));

const DEFAULT_POLL_INTERVAL_MS = 50;
/** The CLI appends API keys while the server runs: a writer waits for the other one's commit. */
const BUSY_TIMEOUT_MS = 5_000;
const SUBSCRIPTION_PAGE_SIZE = 500;
/** SQLite reads a negative LIMIT as "no limit". */
const NO_LIMIT = -1;
const NO_STREAM_REVISION = -1;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position   INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL,
    stream     TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    data       TEXT    NOT NULL,
    metadata   TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    UNIQUE (stream, revision)
  );
  CREATE INDEX IF NOT EXISTS events_by_id ON events (id);
`;

type StreamTip = Pick<EventRow, 'revision' | 'position'>;

/** The open file, and whether SQLite runs it in WAL mode (a file system without shared memory may refuse it). */
function openDatabase(filePath: string): { db: Database.Database; wal: boolean } {
  const db = new Database(filePath);
  // busy_timeout first: switching to WAL itself needs a lock another process may hold.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  let wal = false;
  retryWhileBusy(() => {
    wal = db.pragma('journal_mode = WAL', { simple: true }) === 'wal';
    // In WAL mode, NORMAL: a commit does not sync the WAL itself (SQLite still syncs it before
    // each checkpoint); the store syncs it after each group's commit, off the event loop, and
    // answers the group's appends only then (SqliteEventStore.afterSync). Otherwise FULL: SQLite
    // syncs at each commit. Either way an acknowledged append survives power loss.
    db.pragma(wal ? 'synchronous = NORMAL' : 'synchronous = FULL');
    // Each append of a group runs in a savepoint, whose journal SQLite spills to a new temporary
    // file past 64 KiB: a file made and removed for most groups. In memory it is the group's
    // changed pages, bounded by the group's size.
    db.pragma('temp_store = MEMORY');
    db.exec(SCHEMA);
    migrateForAudit(db);
    migrateChainHeads(db);
  });
  return { db, wal };
}

/**
 * Several processes opening a new file at once (instances started together, the CLI beside a
 * server) can each hold a lock the other needs to switch it to WAL or to create the schema;
 * SQLite then answers SQLITE_BUSY at once rather than wait, to avoid the deadlock. Every step
 * here is idempotent: it is tried again, for as long as the busy timeout.
 */
function retryWhileBusy(step: () => void): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      step();
      return;
    } catch (error) {
      if (!String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY') || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, OPEN_RETRY_MS);
    }
  }
}

const OPEN_RETRY_MS = 20;

function prepareStatements(db: Database.Database) {
  const select = 'SELECT position, id, stream, revision, type, data, metadata, created_at FROM events';
  return {
    streamTip: db.prepare<[string], StreamTip>('SELECT revision, position FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1'),
    // No ORDER BY: it would tempt the planner into scanning the stream instead of the id index,
    // which already yields the earliest position first.
    firstRevisionOfId: db.prepare<[string, string], StreamTip>('SELECT revision, position FROM events WHERE id = ? AND stream = ? LIMIT 1'),
    eventAt: db.prepare<[string, number], Pick<EventRow, 'id' | 'position'>>('SELECT id, position FROM events WHERE stream = ? AND revision = ?'),
    insert: db.prepare<[string, string, number, string, string, string, string, string | null, string | null, string | null]>(
      'INSERT INTO events (id, stream, revision, type, data, metadata, created_at, organization, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    chainHead: db.prepare<[string], ChainHead>('SELECT hash, position, stream, revision FROM chain_heads WHERE organization = ?'),
    setChainHead: db.prepare<[string, string, number, string, number]>(
      'INSERT INTO chain_heads (organization, hash, position, stream, revision) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (organization) DO UPDATE SET hash = excluded.hash, position = excluded.position, stream = excluded.stream, revision = excluded.revision',
    ),
    streamForwards: db.prepare<[string, number, number], EventRow>(`${select} WHERE stream = ? AND revision >= ? ORDER BY revision ASC LIMIT ?`),
    streamBackwards: db.prepare<[string, number, number], EventRow>(`${select} WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`),
    allForwards: db.prepare<[number, number], EventRow>(`${select} WHERE position > ? ORDER BY position ASC LIMIT ?`),
    allBackwards: db.prepare<[number, number], EventRow>(`${select} WHERE position < ? ORDER BY position DESC LIMIT ?`),
    head: db.prepare<[], { head: number | null }>('SELECT max(position) AS head FROM events'),
    // Changes whenever another connection (the CLI, another instance) has committed since this one last asked.
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

function expectationHolds(expected: ExpectedRevision, actual: number): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return actual === NO_STREAM_REVISION;
    case 'stream_exists':
      return actual !== NO_STREAM_REVISION;
    default:
      return expected === actual;
  }
}

/** The embedded event store: one SQLite file, shared safely by the server and the CLI. */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly statements: Statements;
  private readonly subscriptions = new Set<SqliteAllSubscription>();
  private readonly pollIntervalMs: number;
  /** One append inside the group's transaction: a savepoint, so that a refused append undoes only itself. */
  private readonly appendInSavepoint: Database.Transaction<(stream: string, events: NewEvent[], expected: ExpectedRevision) => AppendOutcome>;
  private readonly commitGroup: Database.Transaction<(group: PendingAppend[]) => void>;
  /** The appends waiting for the next group commit, in call order. */
  private pending: PendingAppend[] = [];
  /** One connection commits the appends of a group in the order they were made, group after group. */
  readonly appendsInCallOrder = true;
  private readonly walFile: string;
  /** True in WAL mode: the store syncs the WAL itself (false: SQLite syncs at each commit). */
  private readonly walSynced: boolean;
  private readonly syncFile: (fd: number) => Promise<void>;
  private readonly chainKey: ChainKey | null;
  private walFd: number | null = null;
  /** The groups committed since the sync in progress began: answered after the next one. */
  private unsynced: Array<(failure: unknown) => void> = [];
  private syncing: Promise<void> | null = null;
  /** Set when a sync failed: what was written may not be on disk, and the log takes no more appends. */
  private syncFailure: Error | null = null;
  /** How many groups this connection has committed: what the shared page was read after. */
  private commits = 0;
  /**
   * The last page the subscriptions read, while the log has not changed since: the ones one
   * commit wakes (the saga, the projections, each watch stream) ask for the same page, which is
   * then read once. Kept as rows: each subscription parses its own events, which it may change.
   */
  private sharedPage: { after: number; rows: EventRow[]; commits: number; dataVersion: number } | null = null;

  constructor(filePath: string, options: SqliteEventStoreOptions = {}) {
    const { db, wal } = openDatabase(filePath);
    this.db = db;
    this.walSynced = wal;
    this.statements = prepareStatements(this.db);
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.walFile = `${filePath}-wal`;
    this.syncFile = options.syncFile ?? syncInPool;
    this.chainKey = options.chainKey ?? null;
    this.appendInSavepoint = this.db.transaction((stream, events, expected) => this.appendWithinTransaction(stream, events, expected));
    this.commitGroup = this.db.transaction((group) => {
      for (const append of group) {
        try {
          append.outcome = this.appendInSavepoint(append.stream, append.events, append.expected);
        } catch (error) {
          // SQLite ended the whole transaction (a full disk, an I/O error): the group fails as one.
          if (!this.db.inTransaction) throw error;
          append.error = error;
        }
      }
    });
  }

  static open(filePath: string, options?: SqliteEventStoreOptions): SqliteEventStore {
    return new SqliteEventStore(filePath, options);
  }

  /**
   * Group commit: the appends made in one turn of the event loop go into one transaction and one
   * fsync (trials' claims and outcomes finishing together, a batch's queued trials). Each is
   * applied in call order in a savepoint of its own, with its own expected-revision and
   * idempotency checks against everything before it, the group's earlier appends included; each
   * caller is answered only after the commit, so an acknowledged append is on disk.
   */
  append(stream: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ stream, events, expected: expectedRevision, resolve, reject });
    });
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const limit = options.maxCount ?? NO_LIMIT;
    const rows =
      options.direction === 'backwards'
        ? this.statements.streamBackwards.all(stream, options.fromRevision ?? Number.MAX_SAFE_INTEGER, limit)
        : this.statements.streamForwards.all(stream, options.fromRevision ?? 0, limit);
    return rows.map(toRecordedEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const limit = options.maxCount ?? NO_LIMIT;
    const rows =
      options.direction === 'backwards'
        ? this.statements.allBackwards.all(options.after ?? Number.MAX_SAFE_INTEGER, limit)
        : this.statements.allForwards.all(options.after ?? -1, limit);
    return rows.map(toRecordedEvent);
  }

  async readOrganization(options: OrganizationReadOptions): Promise<AuditedEvent[]> {
    const { sql, parameters } = organizationQuery(options);
    return this.db
      .prepare<Array<string | number>, AuditRow>(sql)
      .all(...parameters)
      .map(toAuditedEvent);
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllSubscription {
    if (!this.db.open) throw new Error('The SQLite event store is closed.');
    const subscription = new SqliteAllSubscription(
      (after) => this.subscriptionPage(after).map(toRecordedEvent),
      options.after ?? -1,
      this.pollIntervalMs,
      () => this.subscriptions.delete(subscription),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** The head table's row, written with each append's events: a DELETE of the newest rows leaves it naming an event no longer there. */
  async chainEnd(organization: string): Promise<ChainEnd | null> {
    const head = this.statements.chainHead.get(organization);
    if (!head) return { hashes: [null], at: null, absent: true };
    return { hashes: [head.hash], at: { stream: head.stream, revision: head.revision } };
  }

  async headPosition(): Promise<number> {
    return this.statements.head.get()?.head ?? -1;
  }

  async close(): Promise<void> {
    // Appends already called are committed (or refused), and synced, before the file closes.
    if (this.pending.length > 0 && this.db.open) this.flush();
    while (this.syncing) await this.syncing;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    if (this.walFd !== null) closeSync(this.walFd);
    this.walFd = null;
    if (this.db.open) this.db.close();
  }

  private appendWithinTransaction(stream: string, events: NewEvent[], expected: ExpectedRevision): AppendOutcome {
    const earlier = this.findEarlierAppend(stream, events);
    if (earlier) return { appended: false, result: earlier };
    const tip = this.statements.streamTip.get(stream);
    const actual = tip?.revision ?? NO_STREAM_REVISION;
    if (!expectationHolds(expected, actual)) throw new WrongExpectedVersion(stream, expected, actual);
    const createdAt = new Date().toISOString();
    let position = tip?.position ?? -1;
    // Inside the write transaction: the organization's head cannot change under us.
    const heads = new Map<string, ChainHead>();
    events.forEach((event, index) => {
      const revision = actual + 1 + index;
      const data = JSON.stringify(event.data ?? null);
      const metadata = JSON.stringify(event.metadata);
      // Liveness events (lease renewals) are neither chained nor read as the organization's audit trail.
      const organization = typeof event.metadata.organization === 'string' && !isLiveness(event.metadata) ? event.metadata.organization : null;
      let link: { prevHash: string | null; hash: string | null } = { prevHash: null, hash: null };
      if (organization !== null) {
        const prevHash = (heads.get(organization) ?? this.statements.chainHead.get(organization))?.hash ?? null;
        const stored = {
          id: event.id,
          type: event.type,
          streamName: stream,
          revision,
          data: JSON.parse(data) as unknown,
          metadata: JSON.parse(metadata) as unknown,
          createdAt,
        };
        link = { prevHash, hash: linkHash(this.chainKey, stored, prevHash) };
      }
      const inserted = this.statements.insert.run(event.id, stream, revision, event.type, data, metadata, createdAt, organization, link.prevHash, link.hash);
      position = Number(inserted.lastInsertRowid);
      if (organization !== null && link.hash !== null) heads.set(organization, { hash: link.hash, position, stream, revision });
    });
    // In the append's savepoint: the head moves with the events, or neither does.
    for (const [organization, head] of heads) this.statements.setChainHead.run(organization, head.hash, head.position, head.stream, head.revision);
    return { appended: events.length > 0, result: { nextExpectedRevision: actual + events.length, position } };
  }

  /**
   * A retried append: when the first id is already in the stream, the whole batch must be there,
   * consecutively, and the original result is returned whatever revision the caller expected now.
   */
  private findEarlierAppend(stream: string, events: NewEvent[]): AppendResult | undefined {
    if (events.length === 0) return undefined;
    const first = this.statements.firstRevisionOfId.get(events[0].id, stream);
    if (!first) return undefined;
    let position = first.position;
    for (let index = 1; index < events.length; index++) {
      const stored = this.statements.eventAt.get(stream, first.revision + index);
      if (stored?.id !== events[index].id) throw new IdempotencyViolation(stream);
      position = stored.position;
    }
    return { nextExpectedRevision: first.revision + events.length - 1, position };
  }

  private flush(): void {
    const group = this.pending;
    if (group.length === 0) return;
    this.pending = [];
    try {
      if (!this.db.open) throw new Error('The SQLite event store is closed.');
      if (this.syncFailure) throw this.syncFailure;
      // IMMEDIATE takes the write lock up front: the revision checks and the inserts see one
      // state, and positions are handed out in commit order, so readers never see N+1 before N.
      this.commitGroup.immediate(group);
      this.commits += 1;
    } catch (error) {
      // The commit itself failed (the disk, a lock held past the busy timeout): nothing of the group is stored.
      for (const append of group) append.reject(error);
      return;
    }
    this.afterSync((failure) => {
      let appended = false;
      for (const append of group) {
        if (failure) append.reject(failure);
        else if (append.outcome) {
          appended ||= append.outcome.appended;
          append.resolve(append.outcome.result);
        } else append.reject(append.error);
      }
      if (appended) this.wakeSubscriptions();
    });
  }

  /**
   * Group commit's second half: the WAL is synced in libuv's pool, not on the event loop (where
   * SQLite's own sync at each commit kept it waiting on the disk), one sync at a time; the groups
   * committed while one runs wait for the next, which covers them all. Each group is answered,
   * in commit order, once a sync begun after its commit has ended.
   */
  private afterSync(answer: (failure: unknown) => void): void {
    if (!this.walSynced) {
      answer(null);
      return;
    }
    this.unsynced.push(answer);
    if (this.syncing === null) this.syncing = this.syncCommitted();
  }

  private async syncCommitted(): Promise<void> {
    while (this.unsynced.length > 0) {
      const answers = this.unsynced;
      this.unsynced = [];
      let failure: unknown = null;
      try {
        this.walFd ??= openSync(this.walFile, 'r+');
        await this.syncFile(this.walFd);
      } catch (error) {
        // After a failed fsync, the kernel may have dropped the pages it could not write: nothing
        // later can be vouched for. The appends are refused from here on; a restart re-reads the file.
        failure = new Error(`The event log could not be synced to disk (${(error as Error).message}); restart the service once the disk is healthy.`);
        this.syncFailure ??= failure as Error;
      }
      for (const answer of answers) answer(failure);
    }
    this.syncing = null;
  }

  /** The events after `after`, one page: read again only when this connection or another has committed since the last read of that page. */
  private subscriptionPage(after: number): EventRow[] {
    const dataVersion = this.statements.dataVersion.get() ?? 0;
    const shared = this.sharedPage;
    if (shared !== null && shared.after === after && shared.commits === this.commits && shared.dataVersion === dataVersion) return shared.rows;
    const rows = this.statements.allForwards.all(after, SUBSCRIPTION_PAGE_SIZE);
    this.sharedPage = { after, rows, commits: this.commits, dataVersion };
    return rows;
  }

  private wakeSubscriptions(): void {
    for (const subscription of this.subscriptions) subscription.wake();
  }
}

interface AppendOutcome {
  appended: boolean;
  result: AppendResult;
}

/** An append waiting for its group's commit; `outcome` or `error` is set inside the transaction. */
interface PendingAppend {
  stream: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
  outcome?: AppendOutcome;
  error?: unknown;
}

/**
 * Pages through the log after its cursor, then waits for news: an append through the same store
 * wakes it at once; appends by other processes are noticed by polling the file.
 */
class SqliteAllSubscription implements AllSubscription {
  /** The page being delivered and the next event's place in it: no shift() per event. */
  private page: RecordedEvent[] = [];
  private next = 0;
  private closed = false;
  private wakeWaiter: (() => void) | undefined;

  constructor(
    private readonly readPage: (after: number) => RecordedEvent[],
    private cursor: number,
    private readonly pollIntervalMs: number,
    private readonly onClose: () => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    return {
      next: () => this.nextEvent(),
      return: async () => {
        await this.close();
        return { done: true, value: undefined };
      },
    };
  }

  wake(): void {
    this.wakeWaiter?.();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake();
    this.onClose();
  }

  private async nextEvent(): Promise<IteratorResult<RecordedEvent>> {
    while (!this.closed) {
      const event = this.next < this.page.length ? this.page[this.next++] : this.fetchPage();
      if (event) return { done: false, value: event };
      await this.waitForNews();
    }
    return { done: true, value: undefined };
  }

  private fetchPage(): RecordedEvent | undefined {
    const page = this.readPage(this.cursor);
    if (page.length === 0) return undefined;
    this.cursor = page[page.length - 1].position;
    this.page = page;
    this.next = 1;
    return page[0];
  }

  private waitForNews(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake(), this.pollIntervalMs);
      this.wakeWaiter = () => {
        clearTimeout(timer);
        this.wakeWaiter = undefined;
        resolve();
      };
    });
  }
}
