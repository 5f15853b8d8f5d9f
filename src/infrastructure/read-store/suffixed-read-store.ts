import type { Collection, Document, IndexSpec, ReadStore, RebuiltIndex } from './read-store.port';

/**
 * A ReadStore whose every collection lives in the store beneath under `<name><suffix>`: the
 * projections, unchanged, write `runs__rebuild_<id>` when they write `runs` (and read it when
 * they read other projections' documents), so a rebuild fills new collections beside the live
 * ones. Closing it leaves the store beneath open.
 */
export class SuffixedReadStore implements ReadStore {
  constructor(
    private readonly inner: ReadStore,
    readonly suffix: string,
  ) {}

  collection<T extends Document = Document>(name: string): Collection<T> {
    return this.inner.collection<T>(name + this.suffix);
  }

  ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<RebuiltIndex[]> {
    return this.inner.ensureIndexes(collection + this.suffix, indexes);
  }

  /** Drops this store's collections only. */
  async dropAll(): Promise<void> {
    for (const name of await this.collectionNames()) await this.dropCollection(name);
  }

  async collectionNames(): Promise<string[]> {
    return (await this.inner.collectionNames()).filter((name) => name.endsWith(this.suffix)).map((name) => name.slice(0, -this.suffix.length));
  }

  renameCollection(from: string, to: string): Promise<void> {
    return this.inner.renameCollection(from + this.suffix, to + this.suffix);
  }

  dropCollection(name: string): Promise<void> {
    return this.inner.dropCollection(name + this.suffix);
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  async close(): Promise<void> {
    // The store beneath is its opener's to close.
  }
}
