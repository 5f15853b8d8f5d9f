/**
 * A replay's writes, sent in ordered bulks instead of one round trip each: the store a
 * projection runner hands its projections while it replays the log into collections that were
 * empty when it began and that nobody else writes (`assay projections rebuild`'s new ones). The
 * projections do not notice: they read a document, evolve it and write it guarded by the
 * position they read, as ever. The guarded writes (an insert, or a replace naming `{_id,
 * _position}`) are held here, in order; a read by `_id` answers what this replay wrote there,
 * and null, with no round trip, for an `_id` it never wrote: the collections began empty. Any
 * other call sends what is held first, then goes through.
 *
 * Each held write is still guarded in the store (the bulk carries its filter, and an insert
 * over a document this replay did not write fails as a duplicate), but the projection was told
 * it applied before the store said so: a bulk in which any write did not apply means another
 * writer changed those documents, which a replay into its own collections rules out, so the
 * replay stops with an error rather than go on from documents it cannot trust (the swap then
 * never happens, and a rebuild can be run again).
 */
import type {
  BulkWrite,
  Collection,
  Document,
  Filter,
  FindOptions,
  IndexSpec,
  ReadStore,
  RebuiltIndex,
  Update,
  UpdateOptions,
  UpdateResult,
} from '../read-store/read-store.port';

/** Writes held before they go out in one bulk: a few hundred kilobytes of read-model documents at most. */
export const REPLAY_BATCH = 500;
/** Documents this replay wrote, kept per collection to answer reads without a round trip; the oldest go first. */
const KEPT_DOCUMENTS = 20_000;
/** The `_id`s this replay wrote, kept per collection to answer "absent" without a round trip; beyond, the store is asked. */
const KEPT_IDS = 1_000_000;

export class BatchedReplayStore implements ReadStore {
  private readonly handles = new Map<string, BatchedCollection>();
  private held = 0;
  private inFlight = 0;
  private sending: Promise<void> | null = null;

  constructor(
    private readonly inner: ReadStore,
    private readonly batch = REPLAY_BATCH,
  ) {}

  /** Writes held, or on their way: the store does not hold them yet. */
  get pending(): number {
    return this.held + this.inFlight;
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    let handle = this.handles.get(name);
    if (!handle) {
      handle = new BatchedCollection(this.inner.collection(name), this);
      this.handles.set(name, handle);
    }
    return handle as unknown as Collection<T>;
  }

  /**
   * Sends every held write, collection by collection, each collection's in order; resolves once
   * they are written, also when another call sent them (a checkpoint must not pass its documents).
   */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
    if (this.held === 0) return;
    [this.inFlight, this.held] = [this.held, 0];
    this.sending = this.sendAll();
    try {
      await this.sending;
    } finally {
      this.sending = null;
      this.inFlight = 0;
    }
  }

  private async sendAll(): Promise<void> {
    for (const handle of this.handles.values()) await handle.send();
  }

  /** Drops what is held, unsent: the runner stopped without a checkpoint, and replays it from the last. */
  discard(): void {
    this.held = 0;
    for (const handle of this.handles.values()) handle.discard();
  }

  /** Counts a write held; sends them all once there are a batch's worth. */
  async heldOne(): Promise<void> {
    this.held += 1;
    if (this.held >= this.batch) await this.flush();
  }

  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<RebuiltIndex[]> {
    await this.flush();
    return this.inner.ensureIndexes(collection, indexes);
  }

  async dropAll(): Promise<void> {
    this.discard();
    return this.inner.dropAll();
  }

  async collectionNames(): Promise<string[]> {
    await this.flush();
    return this.inner.collectionNames();
  }

  async renameCollection(from: string, to: string): Promise<void> {
    await this.flush();
    return this.inner.renameCollection(from, to);
  }

  async dropCollection(name: string): Promise<void> {
    await this.flush();
    return this.inner.dropCollection(name);
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  async close(): Promise<void> {
    await this.flush();
  }
}

/**
 * A copy of a document's plain objects and arrays (read-model documents are JSON's shapes).
 * Not structuredClone: its objects come from the realm it runs in, which a test runner's
 * sandbox tells apart from its own plain objects.
 */
function copied<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copied) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) copy[key] = copied(field);
  return copy as T;
}

/** `{_id, _position}` and nothing else: the filter of a guarded write (projection.ts, writeGuarded). */
function guardedId(filter: Filter): string | null {
  const keys = Object.keys(filter);
  return keys.length === 2 && typeof filter._id === 'string' && typeof filter._position === 'number' ? filter._id : null;
}

class BatchedCollection implements Collection {
  /** The held writes, in order, and where each `_id`'s is among them. */
  private writes: BulkWrite[] = [];
  private readonly heldAt = new Map<string, number>();
  /** What this replay wrote (held or sent), the latest per `_id`, the most recently written last. */
  private readonly known = new Map<string, Document>();
  /** Every `_id` this replay wrote, while `everyId` holds: then any other is absent from the store. */
  private readonly written = new Set<string>();
  private everyId = true;

  constructor(
    private readonly inner: Collection,
    private readonly owner: BatchedReplayStore,
  ) {}

  get name(): string {
    return this.inner.name;
  }

  async send(): Promise<void> {
    const writes = this.writes;
    this.writes = [];
    this.heldAt.clear();
    if (writes.length === 0) return;
    const applied = await this.inner.bulkWrite(writes);
    if (applied !== writes.length) {
      throw new Error(
        `${writes.length - applied} of ${writes.length} replayed writes to ${this.name} were refused by their position guard: another projector wrote these documents during the replay.`,
      );
    }
    // Sent, the oldest may go: a read of one asks the store, which holds what was sent.
    for (const id of this.known.keys()) {
      if (this.known.size <= KEPT_DOCUMENTS) break;
      this.known.delete(id);
    }
  }

  /** Forgets what is held and what was written: from now on the store answers every read. */
  discard(): void {
    this.writes = [];
    this.heldAt.clear();
    this.known.clear();
    this.written.clear();
    this.everyId = false;
  }

  async findOne(filter: Filter): Promise<Document | null> {
    const id = Object.keys(filter).length === 1 && typeof filter._id === 'string' ? filter._id : null;
    if (id === null) {
      await this.owner.flush();
      return this.inner.findOne(filter);
    }
    const mine = this.known.get(id);
    // A copy, as a store's read answers: what the projection makes of it never reaches what is kept.
    if (mine) return copied(mine);
    if (this.everyId && !this.written.has(id)) return null;
    return this.inner.findOne(filter);
  }

  async find(filter: Filter, options?: FindOptions): Promise<Document[]> {
    await this.owner.flush();
    return this.inner.find(filter, options);
  }

  async count(filter: Filter): Promise<number> {
    await this.owner.flush();
    return this.inner.count(filter);
  }

  async insertOne(document: Document): Promise<void> {
    if (this.known.has(document._id)) {
      // Not a guarded write's (it read null): the store says what it makes of it.
      await this.owner.flush();
      return this.inner.insertOne(document);
    }
    const copy = copied(document);
    await this.hold({ insertOne: { document: copy } }, copy);
  }

  async replaceOne(filter: Filter, document: Document, options: UpdateOptions = {}): Promise<UpdateResult> {
    const id = guardedId(filter);
    if (id === null || options.upsert === true || document._id !== id) {
      await this.owner.flush();
      return this.inner.replaceOne(filter, document, options);
    }
    const mine = this.known.get(id);
    // What this replay wrote decides at once; what it no longer keeps was read from the store just before.
    if (mine && mine._position !== filter._position) return { matchedCount: 0, modifiedCount: 0, upsertedId: null };
    const copy = copied(document);
    await this.hold({ replaceOne: { filter, replacement: copy } }, copy);
    return { matchedCount: 1, modifiedCount: 1, upsertedId: null };
  }

  async updateOne(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    await this.owner.flush();
    return this.inner.updateOne(filter, update, options);
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    await this.owner.flush();
    return this.inner.updateMany(filter, update);
  }

  async deleteOne(filter: Filter): Promise<number> {
    await this.owner.flush();
    return this.inner.deleteOne(filter);
  }

  async deleteMany(filter: Filter): Promise<number> {
    await this.owner.flush();
    return this.inner.deleteMany(filter);
  }

  async bulkWrite(writes: ReadonlyArray<BulkWrite>): Promise<number> {
    await this.owner.flush();
    return this.inner.bulkWrite(writes);
  }

  /**
   * `document`: the held copy, which nothing changes (findOne answers copies of it). A document
   * written again before its held write went out is one write: the held one, with its filter
   * (what the store checks), and the newer document (its guard was checked here, against the
   * held one); so a document inserted and changed within a batch is one insert.
   */
  private async hold(write: BulkWrite, document: Document): Promise<void> {
    const at = this.heldAt.get(document._id);
    const held = at === undefined ? undefined : this.writes[at];
    if (at !== undefined && held && 'insertOne' in held) this.writes[at] = { insertOne: { document } };
    else if (at !== undefined && held && 'replaceOne' in held) this.writes[at] = { replaceOne: { filter: held.replaceOne.filter, replacement: document } };
    else {
      this.heldAt.set(document._id, this.writes.length);
      this.writes.push(write);
    }
    this.known.delete(document._id);
    this.known.set(document._id, document);
    if (this.written.size >= KEPT_IDS) this.everyId = false;
    if (this.everyId) this.written.add(document._id);
    await this.owner.heldOne();
  }
}
