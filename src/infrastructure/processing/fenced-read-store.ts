/**
 * The read store as the projection owner writes it on a shared MongoDB. Two fences:
 * - every write first checks the owner's hold on the lease (projection-fence.ts), so a lapsed
 *   owner writes nothing, whatever its runner is doing; on a store that retries writes itself
 *   (MongoDB), before each attempt, and each attempt is bounded to what is left of the hold, so
 *   a write retried or slowed past the hold never lands after it;
 * - checkpoint writes carry the owner's term: `{..., term ≤ mine}` in the filter and `term` in
 *   the update, so once a newer owner has stamped or written a checkpoint the store refuses every
 *   checkpoint write of an older term, and the older owner learns it lost the lease at once.
 * Reads go through unchanged.
 */
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
} from '../read-store/read-store.port';
import type { ProjectionFence } from './projection-fence';
import { CHECKPOINTS } from './projection-runner';

/** Matches a checkpoint that no owner newer than `term` has written (or none at all). */
export function writableByTerm(term: number): Filter {
  return { $or: [{ term: { $lte: term } }, { term: { $exists: false } }] };
}

export class FencedReadStore implements ReadStore {
  private readonly handles = new Map<string, FencedCollection>();
  private readonly inner: ReadStore;

  constructor(
    store: ReadStore,
    private readonly fence: ProjectionFence,
  ) {
    this.inner = store.guardedBy?.(() => fence.remainingMs()) ?? store;
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    let handle = this.handles.get(name);
    if (!handle) {
      const collection = this.inner.collection(name);
      handle = name === CHECKPOINTS ? new FencedCheckpoints(collection, this.fence) : new FencedCollection(collection, this.fence);
      this.handles.set(name, handle);
    }
    return handle as unknown as Collection<T>;
  }

  ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<RebuiltIndex[]> {
    return this.inner.ensureIndexes(collection, indexes);
  }

  async dropAll(): Promise<void> {
    this.fence.check();
    return this.inner.dropAll();
  }

  collectionNames(): Promise<string[]> {
    return this.inner.collectionNames();
  }

  async renameCollection(from: string, to: string): Promise<void> {
    this.fence.check();
    return this.inner.renameCollection(from, to);
  }

  async dropCollection(name: string): Promise<void> {
    this.fence.check();
    return this.inner.dropCollection(name);
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

class FencedCollection implements Collection {
  constructor(
    protected readonly inner: Collection,
    protected readonly fence: ProjectionFence,
  ) {}

  get name(): string {
    return this.inner.name;
  }

  findOne(filter: Filter): Promise<Document | null> {
    return this.inner.findOne(filter);
  }

  find(filter: Filter, options?: FindOptions): Promise<Document[]> {
    return this.inner.find(filter, options);
  }

  count(filter: Filter): Promise<number> {
    return this.inner.count(filter);
  }

  async insertOne(document: Document): Promise<void> {
    this.fence.check();
    return this.inner.insertOne(document);
  }

  async replaceOne(filter: Filter, document: Document, options?: UpdateOptions): Promise<UpdateResult> {
    this.fence.check();
    return this.inner.replaceOne(filter, document, options);
  }

  async updateOne(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    this.fence.check();
    return this.inner.updateOne(filter, update, options);
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    this.fence.check();
    return this.inner.updateMany(filter, update);
  }

  async deleteOne(filter: Filter): Promise<number> {
    this.fence.check();
    return this.inner.deleteOne(filter);
  }

  async deleteMany(filter: Filter): Promise<number> {
    this.fence.check();
    return this.inner.deleteMany(filter);
  }

  async bulkWrite(writes: ReadonlyArray<BulkWrite>): Promise<number> {
    this.fence.check();
    return this.inner.bulkWrite(writes);
  }
}

/** The runner's checkpoint writes (`updateOne({_id, position: {$lt: p}}, {$set: {position: p}}, upsert)`), with the term. */
class FencedCheckpoints extends FencedCollection {
  override async updateOne(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    const term = this.fence.check();
    const guarded = { $and: [filter, writableByTerm(term)] };
    try {
      return await this.inner.updateOne(guarded, { ...update, $set: { ...update.$set, term } }, options);
    } catch (error) {
      // A duplicate on upsert: the checkpoint is ahead, or a newer owner wrote it (then this throws ProjectionLeaseLost).
      if (error instanceof DuplicateKey && typeof filter._id === 'string') await this.refusedIfNewer(filter._id, term);
      this.fence.check();
      throw error;
    }
  }

  /** A checkpoint write carries its term (updateOne above): none goes out in a bulk, which would not. */
  override async bulkWrite(): Promise<number> {
    throw new Error('Checkpoints are written one at a time, each with its term.');
  }

  private async refusedIfNewer(id: string, term: number): Promise<void> {
    const stored = await this.inner.findOne({ _id: id });
    const storedTerm = stored?.term;
    if (typeof storedTerm === 'number' && storedTerm > term) this.fence.lose(`an owner of a later term (${storedTerm}) wrote checkpoint ${id}`);
  }
}
