/**
 * In-memory ReadStore: collections (memory-collection.ts) that behave as MongoDB's do, for
 * tests, the single-process mode and replay benchmarks. Read models here are rebuilt from the
 * event log at each start.
 */
import type { Collection, Document, IndexSpec, ReadStore, RebuiltIndex } from '../read-store.port';
import { FieldIndex } from './field-index';
import { CollectionState, MemoryCollection, uniqueViolation } from './memory-collection';
import { indexName, UniqueIndex } from './memory-documents';
import { SortedIndex } from './sorted-index';

/** A collection's documents at one moment: the store's own objects, which it replaces and never changes. */
export interface CapturedCollection {
  name: string;
  documents: Document[];
  /** The unique indexes (by name) the documents satisfied when they were captured. */
  uniqueIndexes?: string[];
}

export interface MemoryReadStoreOptions {
  /**
   * Freeze every stored document before a projection's evolve sees it (evolveOne hands over the
   * stored object, not a copy): for tests, so that an evolve that changes its input throws.
   */
  freezeHanded?: boolean;
}

export class MemoryReadStore implements ReadStore {
  private readonly states = new Map<string, CollectionState>();
  private readonly handles = new Map<string, MemoryCollection>();

  constructor(private readonly options: MemoryReadStoreOptions = {}) {}

  collection<T extends Document = Document>(name: string): Collection<T> {
    let handle = this.handles.get(name);
    if (!handle) {
      handle = new MemoryCollection(name, this.state(name), this.options.freezeHanded);
      this.handles.set(name, handle);
    }
    // The store keeps whatever it is given; T only describes what callers put in.
    return handle as unknown as Collection<T>;
  }

  /** Answers no rebuilt index: these indexes are made in memory at each start, never dropped. */
  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<RebuiltIndex[]> {
    const state = this.state(collection);
    state.exists = true;
    for (const spec of indexes) {
      this.indexPrefixes(state, Object.keys(spec.keys));
      this.sortedSuffixes(state, spec);
      const name = indexName(spec);
      if (!spec.unique || state.uniqueIndexes.has(name)) continue;
      // Restored documents that satisfied this index when captured are read into it by the first
      // write, not now: a start from a snapshot does not wait for it.
      if (state.satisfied.has(name)) {
        state.uniqueIndexes.set(name, UniqueIndex.deferred(spec));
        continue;
      }
      const index = new UniqueIndex(spec);
      // Like MongoDB, building a unique index over existing duplicates fails and leaves no index.
      for (const doc of state.documents.values()) {
        const keys = index.keysOf(doc);
        if (index.conflicts(keys, doc._id)) throw uniqueViolation(collection, doc._id, name);
        index.add(doc, keys);
      }
      state.uniqueIndexes.set(name, index);
    }
    return [];
  }

  /** Equality narrowing on the first field, and the first two, of a declared index. */
  private indexPrefixes(state: CollectionState, fields: string[]): void {
    for (let length = 1; length <= Math.min(2, fields.length); length += 1) {
      const prefix = fields.slice(0, length);
      const name = prefix.join(',');
      if (prefix.includes('_id') || state.fieldIndexes.has(name)) continue;
      state.fieldIndexes.set(name, new FieldIndex(prefix));
    }
  }

  /**
   * An index `{a, b, c, d}` serves a page filtered by equality on `a` (or `a, b`) and sorted by
   * the keys after it, in their directions: one sorted index per such split.
   */
  private sortedSuffixes(state: CollectionState, spec: IndexSpec): void {
    const fields = Object.entries(spec.keys);
    for (let length = 1; length < fields.length; length += 1) {
      const prefix = fields.slice(0, length).map(([field]) => field);
      if (prefix.includes('_id')) continue;
      const order = fields.slice(length).map(([field, direction]) => ({ field, direction }));
      const index = new SortedIndex(prefix, order);
      if (!state.sortedIndexes.has(index.name)) state.sortedIndexes.set(index.name, index);
    }
  }

  /**
   * Every collection's documents as they are now, in insertion order, without copying them: a
   * write stores a new object, so what is captured stays as it was. Synchronous, so that the
   * capture is of one moment between two events.
   */
  capture(): CapturedCollection[] {
    return [...this.states]
      .filter(([, state]) => state.exists)
      .map(([name, state]) => ({ name, documents: [...state.documents.values()], uniqueIndexes: [...state.uniqueIndexes.keys()] }));
  }

  /**
   * Loads captured collections into an empty store, as they were (documents read from a
   * snapshot file, which nobody else holds). Indexes come afterwards from ensureIndexes.
   */
  restore(collections: readonly CapturedCollection[]): void {
    for (const { name, documents, uniqueIndexes } of collections) {
      const state = this.state(name);
      if (state.documents.size > 0) throw new Error(`Cannot restore "${name}" over documents already there.`);
      state.exists = true;
      for (const doc of documents) state.documents.set(doc._id, doc);
      state.satisfied = new Set(uniqueIndexes);
    }
  }

  async dropAll(): Promise<void> {
    // States are emptied rather than forgotten so that handles already given out stay live.
    for (const state of this.states.values()) empty(state);
  }

  /** Synchronous, so that no read comes between the target's old documents and its new ones. */
  async renameCollection(from: string, to: string): Promise<void> {
    const source = this.states.get(from);
    if (!source?.exists) throw new Error(`Cannot rename "${from}" to "${to}": "${from}" does not exist.`);
    if (from === to) return;
    // The target's state object is kept, and filled with the source's contents, for the handles given out.
    const target = this.state(to);
    empty(target);
    moveEntries(source.documents, target.documents);
    moveEntries(source.uniqueIndexes, target.uniqueIndexes);
    moveEntries(source.fieldIndexes, target.fieldIndexes);
    moveEntries(source.sortedIndexes, target.sortedIndexes);
    target.sequence = source.sequence;
    target.nextSequence = source.nextSequence;
    target.satisfied = source.satisfied;
    target.exists = true;
    empty(source);
  }

  async dropCollection(name: string): Promise<void> {
    const state = this.states.get(name);
    if (state) empty(state);
  }

  async collectionNames(): Promise<string[]> {
    return [...this.states]
      .filter(([, state]) => state.exists)
      .map(([name]) => name)
      .sort();
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    // Nothing to release: the data lives as long as this object.
  }

  private state(name: string): CollectionState {
    let state = this.states.get(name);
    if (!state) {
      state = {
        documents: new Map(),
        uniqueIndexes: new Map(),
        fieldIndexes: new Map(),
        sortedIndexes: new Map(),
        sequence: null,
        nextSequence: 0,
        satisfied: new Set(),
        exists: false,
      };
      this.states.set(name, state);
    }
    return state;
  }
}

function empty(state: CollectionState): void {
  state.documents.clear();
  state.uniqueIndexes.clear();
  state.fieldIndexes.clear();
  state.sortedIndexes.clear();
  state.sequence = null;
  state.nextSequence = 0;
  state.satisfied = new Set();
  state.exists = false;
}

function moveEntries<K, V>(from: Map<K, V>, to: Map<K, V>): void {
  for (const [key, value] of from) to.set(key, value);
  from.clear();
}
