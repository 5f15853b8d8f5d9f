/**
 * The ReadStore port speaks MongoDB's language (filter documents, update operators, sort, skip,
 * limit), so one projection code path serves the in-memory mingo adapter and the MongoDB adapter.
 * Both pass one contract suite (read-store.contract.ts).
 */

/** Every read-model document has a string `_id`. */
export interface Document {
  _id: string;
  [field: string]: unknown;
}

/** A MongoDB filter document, e.g. `{ organization: 'acme', status: { $in: ['running'] } }`. */
export type Filter = Record<string, unknown>;

/** A MongoDB update document using `$set`, `$unset`, `$inc`, `$push` and `$setOnInsert`. */
export type Update = Record<string, Record<string, unknown>>;

/** Field → 1 (ascending) or -1 (descending), applied in key order. */
export type Sort = Record<string, 1 | -1>;

export interface FindOptions {
  sort?: Sort;
  skip?: number;
  limit?: number;
}

export interface UpdateOptions {
  upsert?: boolean;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  /** The `_id` of the inserted document when the update upserted one. */
  upsertedId: string | null;
}

export interface IndexSpec {
  /** Field → 1 or -1, as for MongoDB's createIndex. */
  keys: Record<string, 1 | -1>;
  unique?: boolean;
}

/** One write of an ordered bulkWrite: what a projection's guarded write sends for one document. */
export type BulkWrite<T extends Document = Document> =
  { insertOne: { document: T } } | { replaceOne: { filter: Filter; replacement: T } } | { deleteOne: { filter: Filter } };

/** An index dropped and built again: which, and why (what of its declaration changed). */
export interface RebuiltIndex {
  collection: string;
  index: string;
  reason: string;
}

export interface Collection<T extends Document = Document> {
  readonly name: string;
  findOne(filter: Filter): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  /**
   * What `find` answers, for a caller that only reads it: a store that holds its documents in
   * memory answers them without copying, frozen (deeply), so that no caller can change what it
   * holds. Optional: a store whose `find` builds fresh documents anyway (MongoDB's driver) leaves
   * it out. Call it through `findToRead`.
   */
  findFrozen?(filter: Filter, options?: FindOptions): Promise<ReadonlyArray<Readonly<T>>>;
  count(filter: Filter): Promise<number>;
  /** Inserts, or throws DuplicateKey when a document with the same `_id` exists. */
  insertOne(document: T): Promise<void>;
  /** Replaces the whole document with that `_id`; `upsert` inserts it when absent. */
  replaceOne(filter: Filter, document: T, options?: UpdateOptions): Promise<UpdateResult>;
  updateOne(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
  /**
   * The writes in order, in one round trip where the store has round trips (MongoDB's ordered
   * bulkWrite): the first that fails (DuplicateKey) stops the rest, those before it stay
   * written. Answers how many applied to a document: an insert, a replace whose filter matched,
   * a delete that deleted. A caller that sends only writes each of which must apply compares it
   * with their number.
   */
  bulkWrite(writes: ReadonlyArray<BulkWrite<T>>): Promise<number>;
  /**
   * Offered only by a store whose writes are synchronous (the in-memory one): reads the document
   * with that `_id` and writes what `evolve` makes of it, in one step, so no other write can come
   * between the read and the write and no guard or retry is needed. `evolve` gets the stored
   * document itself (null when absent), which it must not change, with the `id` and the
   * `context` given (so that a caller needs no closure per call), and answers a new document
   * (stored as given, not copied: nobody may change it afterwards, nor what it shares with the
   * stored one or the event), null to delete it, or undefined to leave it as it is.
   */
  evolveOne?<C>(id: string, context: C, evolve: (current: T | null, id: string, context: C) => T | null | undefined): void;
}

/**
 * Checked before every attempt at a write, retries included: throws to stop the write, else
 * answers how many milliseconds the write may still take (the projection owner's hold).
 */
export type WriteGuard = () => number;

export interface ReadStore {
  collection<T extends Document = Document>(name: string): Collection<T>;
  /**
   * This store with `guard` run before every attempt at a write, and each attempt bounded to the
   * time it answers (where the adapter retries writes itself and can bound them, as on MongoDB).
   * Stores that do neither leave it out: a check before each call is then enough.
   */
  guardedBy?(guard: WriteGuard): ReadStore;
  /**
   * Creates the indexes a collection's queries use (a no-op where the engine needs none), and
   * answers those it dropped and built again because their declared options changed, for the
   * caller to log: a rebuild holds the collection's writes while it runs.
   */
  ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<RebuiltIndex[]>;
  /** Drops every collection: read models are rebuilt by replaying the event log. */
  dropAll(): Promise<void>;
  /** The names of the collections that hold documents. */
  collectionNames(): Promise<string[]>;
  /**
   * Moves collection `from`, with its documents and indexes, onto `to` in one step, replacing
   * whatever `to` held (MongoDB's renameCollection with dropTarget): a reader of `to` sees the
   * old collection or the new one, never neither. Throws when `from` does not exist.
   */
  renameCollection(from: string, to: string): Promise<void>;
  /** Drops one collection with its indexes; nothing happens when it does not exist. */
  dropCollection(name: string): Promise<void>;
  /** True when the store answers (a ping for MongoDB). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export const READ_STORE = Symbol('ReadStore');

/** Documents to look at, never to change: the store's own, frozen, where it has them in memory; fresh ones elsewhere. */
export function findToRead<T extends Document>(collection: Collection<T>, filter: Filter, options?: FindOptions): Promise<ReadonlyArray<Readonly<T>>> {
  return collection.findFrozen ? collection.findFrozen(filter, options) : collection.find(filter, options);
}

export class DuplicateKey extends Error {
  constructor(
    readonly collection: string,
    readonly id: string,
  ) {
    super(`A document with _id "${id}" already exists in "${collection}".`);
    this.name = 'DuplicateKey';
  }
}
