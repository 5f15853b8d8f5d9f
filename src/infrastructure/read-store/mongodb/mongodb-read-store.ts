/**
 * MongoDB ReadStore: the port already speaks MongoDB's filter and update language, so each
 * operation maps to one driver call. What this adapter adds is the port's guarantees: string
 * `_id`s (also for upserts), DuplicateKey for code 11000, plain result objects, a total order
 * for every query, undefined never dropped from a filter, and retries on transient errors.
 */
import {
  AnyBulkWriteOperation,
  Collection as DriverCollection,
  Db,
  Document as DriverDocument,
  Filter as DriverFilter,
  MongoClient,
  ObjectId,
  UpdateFilter,
  UpdateResult as DriverUpdateResult,
} from 'mongodb';
import {
  BulkWrite,
  Collection,
  Document,
  DuplicateKey,
  Filter,
  FindOptions,
  IndexSpec,
  ReadStore,
  RebuiltIndex,
  Update,
  UpdateOptions,
  UpdateResult,
  WriteGuard,
} from '../read-store.port';
import { DEFAULT_RETRY_POLICY, RetryPolicy, retrying } from './mongodb-retry';
import { connectStoreClient } from './mongodb-client';
import { reconcileIndexes } from './mongodb-indexes';
import { filterWithNulls, totalOrder, withoutUndefined } from './mongodb-values';

const DEFAULT_DATABASE = 'assay';
const DUPLICATE_KEY_CODE = 11000;
const PING_TIMEOUT_MS = 5000;
const NAMESPACE_NOT_FOUND = 26;

/** The database named in the connection string's path, e.g. `assay_test` in `mongodb://h:27017/assay_test?x=y`. */
export function databaseFromUrl(url: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(url);
  const name = match ? decodeURIComponent(match[1]) : '';
  return name === '' ? undefined : name;
}

/** Whether the filter fixes `_id`, in which case MongoDB takes an upserted document's `_id` from it. */
function namesId(filter: Filter): boolean {
  if ('_id' in filter) return true;
  const clauses = filter.$and;
  return Array.isArray(clauses) && clauses.some((c) => typeof c === 'object' && c !== null && namesId(c as Filter));
}

function newStringId(): string {
  return new ObjectId().toHexString();
}

function toResult(result: DriverUpdateResult): UpdateResult {
  const id: unknown = result.upsertedId;
  return {
    matchedCount: result.matchedCount,
    modifiedCount: result.modifiedCount,
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a string or an ObjectId, whose toString is its hex form
    upsertedId: id === null || id === undefined ? null : String(id),
  };
}

/** Runs a write, turning the server's duplicate key error into the port's DuplicateKey. */
async function guardDuplicates<R>(collection: string, id: string | undefined, write: () => Promise<R>): Promise<R> {
  try {
    return await write();
  } catch (error) {
    // A bulk write's failure carries the failed write's code and key (MongoBulkWriteError).
    const failed = error as { code?: unknown; keyValue?: Record<string, unknown>; message?: string; writeErrors?: Array<{ code?: unknown }> };
    const failure = failed.code === undefined && failed.writeErrors?.[0] ? { ...failed, code: failed.writeErrors[0].code } : failed;
    if (failure.code !== DUPLICATE_KEY_CODE) throw error;
    const key = failure.keyValue ?? {};
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the key's _id is a string or an ObjectId, whose toString is its hex form
    const duplicate = new DuplicateKey(collection, id ?? String(key._id ?? JSON.stringify(key)));
    // The driver's message names the index and key, which says more than a bare _id.
    if (failure.message) duplicate.message = failure.message;
    throw duplicate;
  }
}

function driverWrite(write: BulkWrite): AnyBulkWriteOperation {
  if ('insertOne' in write) return { insertOne: { document: withoutUndefined(write.insertOne.document) as DriverDocument } };
  if ('replaceOne' in write) {
    const { filter, replacement } = write.replaceOne;
    return { replaceOne: { filter: filterWithNulls(filter), replacement: withoutUndefined(replacement) } };
  }
  return { deleteOne: { filter: filterWithNulls(write.deleteOne.filter) } };
}

export class MongoCollection implements Collection {
  constructor(
    readonly name: string,
    private readonly collection: DriverCollection,
    private readonly retry: RetryPolicy = DEFAULT_RETRY_POLICY,
    /** Run before each attempt at a write (a projection owner's fence): its answer bounds the attempt. */
    private readonly guard?: WriteGuard,
  ) {}

  async findOne(filter: Filter): Promise<Document | null> {
    const query = filterWithNulls(filter) as DriverFilter<DriverDocument>;
    return this.retrying(async () => (await this.collection.findOne(query, { sort: totalOrder(undefined) })) as Document | null);
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<Document[]> {
    const query = filterWithNulls(filter) as DriverFilter<DriverDocument>;
    return this.retrying(async () => {
      const cursor = this.collection.find(query).sort(totalOrder(options.sort));
      if (options.skip !== undefined) cursor.skip(options.skip);
      if (options.limit !== undefined) cursor.limit(options.limit);
      return (await cursor.toArray()) as unknown as Document[];
    });
  }

  async count(filter: Filter): Promise<number> {
    const query = filterWithNulls(filter);
    return this.retrying(() => this.collection.countDocuments(query));
  }

  async insertOne(document: Document): Promise<void> {
    // A copy: the driver sets `_id` on the object it inserts when missing, and undefined fields go.
    const stored = withoutUndefined(document);
    await this.writing((bound) => guardDuplicates(this.name, document._id, () => this.collection.insertOne({ ...stored } as DriverDocument, bound)));
  }

  async replaceOne(filter: Filter, document: Document, options: UpdateOptions = {}): Promise<UpdateResult> {
    const upsert = options.upsert ?? false;
    const query = filterWithNulls(filter) as DriverFilter<DriverDocument>;
    const stored: DriverDocument = withoutUndefined(document);
    const replacement: DriverDocument =
      // A replacement may come without an _id although the type says otherwise.
      upsert && (document._id as string | undefined) === undefined && !namesId(filter) ? { ...stored, _id: newStringId() } : stored;
    const result = await this.writing((bound) =>
      guardDuplicates(this.name, document._id, () => this.collection.replaceOne(query, replacement, { upsert, ...bound })),
    );
    return toResult(result);
  }

  async updateOne(filter: Filter, update: Update, options: UpdateOptions = {}): Promise<UpdateResult> {
    const upsert = options.upsert ?? false;
    const query = filterWithNulls(filter) as DriverFilter<DriverDocument>;
    const change = withoutUndefined(upsert ? this.withStringId(filter, update) : (update as UpdateFilter<DriverDocument>));
    const result = await this.writing((bound) => guardDuplicates(this.name, undefined, () => this.collection.updateOne(query, change, { upsert, ...bound })));
    return toResult(result);
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const query = filterWithNulls(filter) as DriverFilter<DriverDocument>;
    const change = withoutUndefined(update) as UpdateFilter<DriverDocument>;
    const result = await this.writing((bound) => guardDuplicates(this.name, undefined, () => this.collection.updateMany(query, change, bound)));
    return toResult(result);
  }

  async deleteOne(filter: Filter): Promise<number> {
    const query = filterWithNulls(filter);
    return this.writing(async (bound) => (await this.collection.deleteOne(query, bound)).deletedCount);
  }

  async deleteMany(filter: Filter): Promise<number> {
    const query = filterWithNulls(filter);
    return this.writing(async (bound) => (await this.collection.deleteMany(query, bound)).deletedCount);
  }

  /**
   * One ordered bulkWrite. Not retried here: a bulk applied in part before its connection failed
   * would, sent again, count short where it had applied (the driver's own retryable write, which
   * the server recognises, still stands). With a guard, it runs first and bounds the call.
   */
  async bulkWrite(writes: ReadonlyArray<BulkWrite>): Promise<number> {
    if (writes.length === 0) return 0;
    const operations = writes.map(driverWrite);
    const bound = this.guard ? { timeoutMS: Math.max(1, Math.floor(this.guard())) } : {};
    const result = await guardDuplicates(this.name, undefined, () => this.collection.bulkWrite(operations, { ordered: true, ...bound }));
    return result.insertedCount + result.matchedCount + result.deletedCount;
  }

  private retrying<T>(operation: () => Promise<T>): Promise<T> {
    return retrying(this.retry, operation);
  }

  /**
   * A write, retried on transient errors; with a guard, the guard runs before every attempt (a
   * lapsed owner's retry stops there) and the attempt is bounded to what it answers: the driver
   * gives up, and the server (maxTimeMS) stops the write, once that time is out.
   */
  private writing<T>(operation: (bound: { timeoutMS?: number }) => Promise<T>): Promise<T> {
    const guard = this.guard;
    if (!guard) return retrying(this.retry, () => operation({}));
    return retrying(this.retry, () => operation({ timeoutMS: Math.max(1, Math.floor(guard())) }));
  }

  /**
   * An upsert whose filter does not fix `_id` would get an ObjectId from the server; supplying a
   * string one on insert keeps every read-model `_id` a string, as the port promises.
   */
  private withStringId(filter: Filter, update: Update): UpdateFilter<DriverDocument> {
    // An update names only the operators it uses.
    const onInsert = (update.$setOnInsert as Record<string, unknown> | undefined) ?? {};
    const set = update.$set as Record<string, unknown> | undefined;
    if (namesId(filter) || '_id' in onInsert || (set !== undefined && '_id' in set)) {
      return update;
    }
    return { ...update, $setOnInsert: { ...onInsert, _id: newStringId() } };
  }
}

export class MongoReadStore implements ReadStore {
  private readonly handles = new Map<string, MongoCollection>();

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    private readonly guard?: WriteGuard,
  ) {}

  /** Connects to `url`; the database is `dbName`, else the one in the URL's path, else "assay". */
  static async connect(url: string, dbName?: string): Promise<MongoReadStore> {
    // Not ignoreUndefined: it applies to filters too, where `{ _id: undefined }` would match every
    // document. Undefined fields are dropped from documents here instead (mongodb-values.ts).
    // Primary reads and majority writes whatever the URL says (mongodb-client.ts).
    const client = await connectStoreClient(url);
    return new MongoReadStore(client, client.db(dbName ?? databaseFromUrl(url) ?? DEFAULT_DATABASE));
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    let handle = this.handles.get(name);
    if (!handle) {
      handle = new MongoCollection(name, this.db.collection(name), DEFAULT_RETRY_POLICY, this.guard);
      this.handles.set(name, handle);
    }
    // MongoDB stores whatever it is given; T only describes what callers put in.
    return handle as unknown as Collection<T>;
  }

  /** The same database and connection, with `guard` before every write attempt (ReadStore.guardedBy). */
  guardedBy(guard: WriteGuard): ReadStore {
    return new MongoReadStore(this.client, this.db, guard);
  }

  /** Creates what is missing and rebuilds an index whose options changed (mongodb-indexes.ts), answering those it rebuilt. */
  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<RebuiltIndex[]> {
    if (indexes.length === 0) return [];
    try {
      return await retrying(DEFAULT_RETRY_POLICY, () =>
        guardDuplicates(collection, undefined, () => reconcileIndexes(this.db.collection(collection), indexes)),
      );
    } catch (error) {
      if (error instanceof DuplicateKey) {
        error.message = `${error.message}: ${collection} holds documents a unique index now refuses; run \`assay projections rebuild\` to rebuild the read models.`;
      }
      throw error;
    }
  }

  async dropAll(): Promise<void> {
    for (const name of await this.userCollections()) await this.db.dropCollection(name);
  }

  async collectionNames(): Promise<string[]> {
    return (await this.userCollections()).sort();
  }

  /**
   * One renameCollection command with dropTarget: the server swaps the namespaces under one
   * lock, so readers of `to` meet the old collection or the new one. Not retried: a rename that
   * went through before its connection failed would fail again for want of `from`.
   */
  async renameCollection(from: string, to: string): Promise<void> {
    if (from === to) return;
    await this.db.renameCollection(from, to, { dropTarget: true, ...this.bound() });
  }

  async dropCollection(name: string): Promise<void> {
    try {
      await retrying(DEFAULT_RETRY_POLICY, () => this.db.dropCollection(name, this.bound()));
    } catch (error) {
      // Servers before 7.0 refuse to drop what is not there.
      if ((error as { code?: unknown }).code !== NAMESPACE_NOT_FOUND) throw error;
    }
  }

  async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const answer = this.db
      .command({ ping: 1 })
      .then((reply) => reply.ok === 1)
      .catch(() => false);
    try {
      return await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** With a guard (a fenced view), runs it and bounds the call to its answer; else no bound. */
  private bound(): { timeoutMS?: number } {
    return this.guard ? { timeoutMS: Math.max(1, Math.floor(this.guard())) } : {};
  }

  /** Collections and views, leaving out MongoDB's own `system.*` collections. */
  private async userCollections(): Promise<string[]> {
    const infos = await this.db.listCollections({}, { nameOnly: true }).toArray();
    return infos.map((info) => info.name).filter((name) => !name.startsWith('system.'));
  }
}
