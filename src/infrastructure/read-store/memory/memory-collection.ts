/**
 * One in-memory collection: a Map from `_id` to document, filtered with mingo (MongoDB's query
 * language) so projections behave the same here as on MongoDB, with an O(1) path for filters on
 * `_id` and index buckets that narrow the others.
 */
import 'mingo/init/system';
import { randomBytes } from 'node:crypto';
import { update as applyOperator } from 'mingo';
import type { UpdateExpression } from 'mingo/updater';
import { BulkWrite, Collection, Document, DuplicateKey, Filter, FindOptions, Update, UpdateOptions, UpdateResult } from '../read-store.port';
import { FieldIndex } from './field-index';
import { compileFilter, UniqueIndex, deepCopy, deepFreeze, sameValue, sortDocuments, upsertSeed } from './memory-documents';
import type { SortedIndex } from './sorted-index';

export interface CollectionState {
  readonly documents: Map<string, Document>;
  readonly uniqueIndexes: Map<string, UniqueIndex>;
  /** By the leading fields of each declared index: what narrows a query before it is tested. */
  readonly fieldIndexes: Map<string, FieldIndex>;
  /** By each declared index's trailing keys within its leading ones: what serves a sorted page. */
  readonly sortedIndexes: Map<string, SortedIndex>;
  /**
   * Insertion order, so that a narrowed query answers in the same order as a full scan. Built on
   * the first query that needs it (null until then): `documents` iterates in the same order (a
   * replaced document keeps its place, a deleted one leaves it), so nothing is lost by waiting.
   */
  sequence: Map<string, number> | null;
  nextSequence: number;
  /** Unique indexes the documents restored from a snapshot satisfied when it was taken. */
  satisfied: ReadonlySet<string>;
  /** MongoDB creates a collection on its first write or index, not on a read. */
  exists: boolean;
}

/** The insertion order of every document, numbered from the documents' own order the first time it is needed. */
export function sequences(state: CollectionState): Map<string, number> {
  if (state.sequence === null) {
    const sequence = new Map<string, number>();
    let next = 0;
    for (const id of state.documents.keys()) sequence.set(id, next++);
    state.sequence = sequence;
    state.nextSequence = next;
  }
  return state.sequence;
}

const NO_KEYS: readonly string[] = [];

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A fresh object each time, so that a caller changing a result cannot change the next one. */
function updated(matchedCount: number, modifiedCount: number): UpdateResult {
  return { matchedCount, modifiedCount, upsertedId: null };
}

/** A fresh id shaped like a MongoDB ObjectId's hex string, for upserts whose filter names none. */
function generatedId(): string {
  return randomBytes(12).toString('hex');
}

function immutableId(collection: string, id: string): Error {
  return new Error(`Updating "${collection}" would change the immutable _id of document "${id}".`);
}

export function uniqueViolation(collection: string, id: string, index: string): DuplicateKey {
  const error = new DuplicateKey(collection, id);
  error.message = `Document "${id}" duplicates a key of unique index "${index}" in "${collection}".`;
  return error;
}

/** Applies each operator of an update document in turn; mingo's updater takes one at a time. */
/** A copy of the document with `_id` set and, as MongoDB stores it, first. */
function withId(doc: Record<string, unknown>, id: string): Document {
  if (doc._id === id) return doc as Document;
  const result: Document = { _id: id, ...doc };
  result._id = id;
  return result;
}

/**
 * Whether `doc` holds every field's value, for a filter of top-level fields with string, number
 * or boolean values (an array field matches when it holds the value, as in MongoDB); undefined
 * for any other filter.
 */
function matchesPlainValues(filter: Filter, doc: Document): boolean | undefined {
  let matches = true;
  for (const field in filter) {
    const value = filter[field];
    const kind = typeof value;
    if ((kind !== 'string' && kind !== 'number' && kind !== 'boolean') || field.startsWith('$') || field.includes('.')) return undefined;
    const held = doc[field];
    if (held !== value && !(Array.isArray(held) && held.includes(value))) matches = false;
  }
  return matches;
}

function applyUpdate(target: Document, update: Update, inserting: boolean): void {
  for (const [operator, args] of Object.entries(update)) {
    if (!operator.startsWith('$')) {
      throw new Error(`An update document holds operators only, found "${operator}".`);
    }
    if (operator === '$setOnInsert') {
      if (inserting) applyOperator(target, { $set: deepCopy(args) });
      continue;
    }
    // The copy keeps the caller's objects (e.g. a $push-ed array) out of the store.
    applyOperator(target, { [operator]: deepCopy(args) } as unknown as UpdateExpression);
  }
}

export class MemoryCollection implements Collection {
  constructor(
    readonly name: string,
    private readonly state: CollectionState,
    private readonly freezeHanded = false,
  ) {}

  async findOne(filter: Filter): Promise<Document | null> {
    const doc = this.first(filter);
    return doc ? deepCopy(doc) : null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<Document[]> {
    return this.found(filter, options).map(deepCopy);
  }

  /** The stored documents themselves, frozen: no copy, and nothing a caller does can change them. */
  async findFrozen(filter: Filter, options: FindOptions = {}): Promise<ReadonlyArray<Readonly<Document>>> {
    return this.found(filter, options).map(deepFreeze);
  }

  async count(filter: Filter): Promise<number> {
    if (typeof filter._id !== 'string') {
      for (const index of this.state.fieldIndexes.values()) {
        const exact = index.exactCount(filter, () => this.state.documents.values());
        if (exact !== null) return exact;
      }
    }
    return this.matching(filter).length;
  }

  async insertOne(document: Document): Promise<void> {
    if (this.state.documents.has(document._id)) throw new DuplicateKey(this.name, document._id);
    this.write(undefined, deepCopy(document));
  }

  async replaceOne(filter: Filter, document: Document, options: UpdateOptions = {}): Promise<UpdateResult> {
    const current = this.first(filter);
    if (current) {
      // A replacement may come without an _id (callers build it from JSON and partial shapes).
      const givenId = document._id as string | undefined;
      if (givenId !== undefined && givenId !== current._id) throw immutableId(this.name, current._id);
      return this.store(current, withId(deepCopy(document), current._id));
    }
    if (!options.upsert) return updated(0, 0);
    const seedId = upsertSeed(filter)._id;
    const id = (document._id as string | undefined) ?? (typeof seedId === 'string' ? seedId : generatedId());
    return this.insertUpserted(withId(deepCopy(document), id));
  }

  async updateOne(filter: Filter, update: Update, options: UpdateOptions = {}): Promise<UpdateResult> {
    const current = this.first(filter);
    if (current) return this.modify(current, update);
    if (!options.upsert) return updated(0, 0);
    // A copy: the filter's values must not become part of a stored document (which may be frozen later).
    const seed = deepCopy(upsertSeed(filter)) as Document;
    applyUpdate(seed, update, true);
    // The seed holds only the filter's equality fields: its _id may be absent or not a string.
    const seededId: unknown = seed._id;
    const id = seededId ?? generatedId();
    if (typeof id !== 'string') throw new Error(`Upserted documents in "${this.name}" need a string _id.`);
    return this.insertUpserted(withId(seed, id));
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const matches = this.matching(filter);
    let modifiedCount = 0;
    for (const current of matches) modifiedCount += this.modify(current, update).modifiedCount;
    return { matchedCount: matches.length, modifiedCount, upsertedId: null };
  }

  async deleteOne(filter: Filter): Promise<number> {
    const doc = this.first(filter);
    if (doc) this.remove(doc);
    return doc ? 1 : 0;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const matches = this.matching(filter);
    matches.forEach((doc) => this.remove(doc));
    return matches.length;
  }

  async bulkWrite(writes: ReadonlyArray<BulkWrite>): Promise<number> {
    let applied = 0;
    for (const write of writes) applied += await this.writeOne(write);
    return applied;
  }

  private async writeOne(write: BulkWrite): Promise<number> {
    if ('insertOne' in write) {
      await this.insertOne(write.insertOne.document);
      return 1;
    }
    if ('replaceOne' in write) return (await this.replaceOne(write.replaceOne.filter, write.replaceOne.replacement)).matchedCount;
    return this.deleteOne(write.deleteOne.filter);
  }

  /** The stored documents (not copies) a find answers, in its order. */
  private found(filter: Filter, options: FindOptions): Document[] {
    const page = this.sortedPage(filter, options);
    if (page) return page;
    const matches = this.matching(filter);
    if (options.sort) sortDocuments(matches, options.sort);
    const start = Math.max(0, options.skip ?? 0);
    // As in MongoDB a limit of 0 means none, and a negative one counts like its absolute value.
    const end = options.limit ? start + Math.abs(options.limit) : undefined;
    return matches.slice(start, end);
  }

  /**
   * The read and the write in one synchronous step (see the port): no copy either way, so an
   * update allocates only what changed. A store made with `freezeHanded` freezes what it hands
   * to `evolve` first, the document and the context (tests: an evolve that changes either, or
   * answers part of them as its new document, then throws instead).
   */
  evolveOne<C>(id: string, context: C, evolve: (current: Document | null, id: string, context: C) => Document | null | undefined): void {
    const current = this.state.documents.get(id);
    if (this.freezeHanded) deepFreeze(context);
    const next = evolve(current === undefined ? null : this.freezeHanded ? deepFreeze(current) : current, id, context);
    if (next === undefined) return;
    if (next === null) {
      if (current) this.remove(current);
      return;
    }
    if (next._id !== id) throw immutableId(this.name, id);
    this.write(current, next);
  }

  /**
   * A sorted page read along a sorted index: from the keyset cursor, testing documents in order
   * until the page is full. Null when no index serves this filter and sort.
   */
  private sortedPage(filter: Filter, options: FindOptions): Document[] | null {
    if (!options.sort || typeof filter._id === 'string') return null;
    for (const index of this.state.sortedIndexes.values()) {
      const ids = index.walk(filter, options.sort, () => this.withSequences());
      if (ids === null) continue;
      const test = compileFilter(filter);
      let skip = Math.max(0, options.skip ?? 0);
      const wanted = options.limit ? Math.abs(options.limit) : Number.POSITIVE_INFINITY;
      const page: Document[] = [];
      for (const id of ids) {
        if (page.length >= wanted) break;
        const doc = this.state.documents.get(id);
        if (doc === undefined || !test(doc)) continue;
        if (skip > 0) skip -= 1;
        else page.push(doc);
      }
      return page;
    }
    return null;
  }

  private *withSequences(): Generator<[Document, number]> {
    const sequence = sequences(this.state);
    for (const [id, doc] of this.state.documents) yield [doc, sequence.get(id) ?? 0];
  }

  /** The stored document (not a copy) a filter with a string `_id` can only mean, if it matches. */
  private byId(filter: Filter, id: string): Document | undefined {
    const doc = this.state.documents.get(id);
    if (!doc) return undefined;
    for (const field in filter) {
      if (field === '_id') continue;
      // Only a filter with conditions besides `_id` pays for testing them; plain values (the
      // projections' `{_id, _position}`) are compared here, without compiling the filter.
      return (matchesPlainValues(filter, doc) ?? compileFilter(filter)(doc)) ? doc : undefined;
    }
    return doc;
  }

  private first(filter: Filter): Document | undefined {
    if (typeof filter._id === 'string') return this.byId(filter, filter._id);
    const test = compileFilter(filter);
    for (const doc of this.candidates(filter)) if (test(doc)) return doc;
    return undefined;
  }

  /** Matching stored documents in natural (insertion) order, in a fresh array. */
  private matching(filter: Filter): Document[] {
    if (typeof filter._id === 'string') {
      const doc = this.byId(filter, filter._id);
      return doc ? [doc] : [];
    }
    const test = compileFilter(filter);
    const matches: Document[] = [];
    for (const doc of this.candidates(filter)) if (test(doc)) matches.push(doc);
    return matches;
  }

  /** The documents a filter can match: the fewest an index allows, in insertion order; else all. */
  private candidates(filter: Filter): Iterable<Document> {
    let narrowest: string[] | null = null;
    for (const index of this.state.fieldIndexes.values()) {
      const ids = index.candidates(filter, () => this.state.documents.values());
      if (ids !== null && (narrowest === null || ids.length < narrowest.length)) narrowest = ids;
    }
    if (narrowest === null) return this.state.documents.values();
    if (narrowest.length <= 1) return narrowest.map((id) => this.documentOf(id));
    const order = sequences(this.state);
    const sequenceOf = (id: string): number => {
      const sequence = order.get(id);
      if (sequence === undefined) throw new Error(`memory read store: document ${id} has no insertion sequence`);
      return sequence;
    };
    return narrowest.sort((a, b) => sequenceOf(a) - sequenceOf(b)).map((id) => this.documentOf(id));
  }

  private documentOf(id: string): Document {
    const doc = this.state.documents.get(id);
    if (doc === undefined) throw new Error(`memory read store: index names a missing document ${id}`);
    return doc;
  }

  private modify(current: Document, update: Update): UpdateResult {
    const next = deepCopy(current);
    applyUpdate(next, update, false);
    if (next._id !== current._id) throw immutableId(this.name, current._id);
    return this.store(current, next);
  }

  private store(current: Document, next: Document): UpdateResult {
    if (sameValue(current, next)) return updated(1, 0);
    this.write(current, next);
    return updated(1, 1);
  }

  private insertUpserted(doc: Document): UpdateResult {
    if (this.state.documents.has(doc._id)) throw new DuplicateKey(this.name, doc._id);
    this.write(undefined, doc);
    return { matchedCount: 0, modifiedCount: 0, upsertedId: doc._id };
  }

  /** Stores a document the store owns; every unique index is checked before anything changes. */
  private write(previous: Document | undefined, next: Document): void {
    const unique = this.state.uniqueIndexes;
    if (unique.size === 1) {
      const [[name, index]] = unique;
      index.ensureBuilt(() => this.state.documents.values());
      if (this.moveScalarKey(name, index, previous, next)) {
        this.writeUnchecked(previous, next);
        return;
      }
    }
    this.writeChecked(previous, next);
  }

  /**
   * The common case of one unique index on one field holding a scalar in both versions: checked
   * and moved without building key arrays. False when keysOf is needed (writeChecked then does it all).
   */
  private moveScalarKey(name: string, index: UniqueIndex, previous: Document | undefined, next: Document): boolean {
    const key = index.scalarKeyOf(next);
    const before = previous ? index.scalarKeyOf(previous) : null;
    if (key === null || (previous && before === null)) return false;
    // Most writes leave the indexed field as it was: this document owns that key already.
    if (before === key) return true;
    const owner = index.ownerOf(key);
    if (owner !== undefined && owner !== next._id) throw uniqueViolation(this.name, next._id, name);
    index.moveKey(next._id, before, key);
    return true;
  }

  private writeChecked(previous: Document | undefined, next: Document): void {
    let planned: Array<[UniqueIndex, readonly string[], string[]]> | null = null;
    for (const [name, index] of this.state.uniqueIndexes) {
      index.ensureBuilt(() => this.state.documents.values());
      const keys = index.keysOf(next);
      const before = previous ? index.keysOf(previous) : NO_KEYS;
      // Most writes leave the indexed fields as they were: this document owns those keys already.
      if (sameKeys(before, keys)) continue;
      if (index.conflicts(keys, next._id)) throw uniqueViolation(this.name, next._id, name);
      (planned ??= []).push([index, before, keys]);
    }
    if (planned) {
      for (const [index, before, keys] of planned) {
        if (previous) index.remove(previous, before);
        index.add(next, keys);
      }
    }
    this.writeUnchecked(previous, next);
  }

  /** The write once the unique indexes agreed: the other indexes, the order, the document. */
  private writeUnchecked(previous: Document | undefined, next: Document): void {
    for (const index of this.state.fieldIndexes.values()) {
      if (previous) index.update(previous, next);
      else index.add(next);
    }
    // Without a sequence yet, no sorted index is built either: they number documents from it.
    const order = this.state.sequence;
    if (order) {
      if (!previous) order.set(next._id, this.state.nextSequence++);
      const sequence = order.get(next._id) ?? 0;
      for (const index of this.state.sortedIndexes.values()) {
        if (previous) index.update(next, sequence);
        else index.add(next, sequence);
      }
    }
    this.state.documents.set(next._id, next);
    this.state.exists = true;
  }

  private remove(doc: Document): void {
    for (const index of this.state.uniqueIndexes.values()) index.remove(doc);
    for (const index of this.state.fieldIndexes.values()) index.remove(doc);
    for (const index of this.state.sortedIndexes.values()) index.remove(doc);
    this.state.sequence?.delete(doc._id);
    this.state.documents.delete(doc._id);
  }
}
