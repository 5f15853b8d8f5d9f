/**
 * A sorted index for the in-memory read store: the documents of each equality partition (e.g.
 * one organization) kept in a sort order, so that a keyset page (`{organization, $or: [after
 * the cursor]}` sorted by the index's trailing keys) costs a binary search and the page, not a
 * scan and a sort of the whole partition.
 */
import type { Document, Filter, Sort } from '../read-store.port';
import { compareValues } from './memory-documents';

type Scalar = string | number | boolean | null | undefined;

interface Entry {
  readonly id: string;
  readonly keys: readonly Scalar[];
  readonly sequence: number;
}

interface Placement {
  readonly partition: string;
  readonly entry: Entry;
}

export interface SortField {
  readonly field: string;
  readonly direction: 1 | -1;
}

function isScalar(value: unknown): value is Scalar {
  return value === null || value === undefined || ['string', 'number', 'boolean'].includes(typeof value);
}

/** The scalar at a dotted path through plain objects, or `NOT_SCALAR` (an array, an object). */
function scalarAt(doc: Document, path: readonly string[]): Scalar | typeof NOT_SCALAR {
  let value: unknown = doc;
  for (const part of path) {
    if (value === null || value === undefined) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) return NOT_SCALAR;
    value = (value as Record<string, unknown>)[part];
  }
  return isScalar(value) ? value : NOT_SCALAR;
}

const NOT_SCALAR = Symbol('not a scalar');

/** The scalar a filter's condition pins a field to (`v` or `{$eq: v}`), else NOT_SCALAR. */
function pinned(condition: unknown): Scalar | typeof NOT_SCALAR {
  if (typeof condition === 'object' && condition !== null && !Array.isArray(condition)) {
    const keys = Object.keys(condition);
    if (keys.length === 1 && keys[0] === '$eq') condition = (condition as { $eq: unknown }).$eq;
    else return NOT_SCALAR;
  }
  // Missing and null are the same to an equality filter, but not to a partition key of values.
  return condition === undefined || condition === null || !isScalar(condition) ? NOT_SCALAR : condition;
}

export class SortedIndex {
  private readonly partitions = new Map<string, Entry[]>();
  private readonly placements = new Map<string, Placement>();
  /** Documents whose indexed fields hold an array or an object: while there are any, the index is not used. */
  private readonly others = new Set<string>();
  private readonly prefixPaths: string[][];
  private readonly sortPaths: string[][];
  /** Built on the first query that can use it, so that a replay pays nothing for it. */
  private built = false;

  constructor(
    readonly prefix: readonly string[],
    readonly order: readonly SortField[],
  ) {
    this.prefixPaths = prefix.map((field) => field.split('.'));
    this.sortPaths = order.map(({ field }) => field.split('.'));
  }

  get name(): string {
    return `${this.prefix.join(',')}|${this.order.map(({ field, direction }) => `${field}:${direction}`).join(',')}`;
  }

  add(doc: Document, sequence: number): void {
    if (this.built) this.place(doc, sequence);
  }

  remove(doc: Document): void {
    if (this.built) this.displace(doc._id);
  }

  /** Moves a rewritten document when its partition or sort keys changed; most writes change neither. */
  update(next: Document, sequence: number): void {
    if (!this.built) return;
    const placed = this.placements.get(next._id);
    const located = this.locate(next);
    if (placed && located && placed.partition === located.partition && located.keys.every((key, i) => key === placed.entry.keys[i])) return;
    this.displace(next._id);
    this.place(next, sequence);
  }

  /**
   * The ids, in the sort's order, from which a query's matches can only come, starting at its
   * keyset cursor; null when this index does not serve the filter and sort. The caller still
   * tests each document against the whole filter.
   */
  walk(filter: Filter, sort: Sort, documents: () => Iterable<[Document, number]>): Iterable<string> | null {
    if (!this.serves(sort)) return null;
    const values: Scalar[] = [];
    for (const field of this.prefix) {
      const value = pinned(filter[field]);
      if (value === NOT_SCALAR) return null;
      values.push(value);
    }
    if (!this.built) this.build(documents());
    if (this.others.size > 0) return null;
    const entries = this.partitions.get(partitionKey(values)) ?? [];
    const cursor = keysetCursor(filter.$or, this.order);
    const start = cursor === null ? 0 : this.firstAfter(entries, cursor);
    return idsFrom(entries, start);
  }

  /** True when the sort is exactly the index's order: same fields, same directions. */
  private serves(sort: Sort): boolean {
    const fields = Object.entries(sort);
    return (
      fields.length === this.order.length && fields.every(([field, direction], i) => this.order[i].field === field && this.order[i].direction === direction)
    );
  }

  private build(documents: Iterable<[Document, number]>): void {
    this.built = true;
    for (const [doc, sequence] of documents) {
      const located = this.locate(doc);
      if (located === null) {
        this.others.add(doc._id);
        continue;
      }
      const entry: Entry = { id: doc._id, keys: located.keys, sequence };
      const partition = this.partitions.get(located.partition);
      if (partition) partition.push(entry);
      else this.partitions.set(located.partition, [entry]);
      this.placements.set(doc._id, { partition: located.partition, entry });
    }
    for (const entries of this.partitions.values()) entries.sort((a, b) => this.compare(a, b));
  }

  private locate(doc: Document): { partition: string; keys: Scalar[] } | null {
    const values: Scalar[] = [];
    for (const path of this.prefixPaths) {
      const value = scalarAt(doc, path);
      if (value === NOT_SCALAR) return null;
      values.push(value);
    }
    const keys: Scalar[] = [];
    for (const path of this.sortPaths) {
      const value = scalarAt(doc, path);
      if (value === NOT_SCALAR) return null;
      keys.push(value);
    }
    return { partition: partitionKey(values), keys };
  }

  private place(doc: Document, sequence: number): void {
    const located = this.locate(doc);
    if (located === null) {
      this.others.add(doc._id);
      return;
    }
    const entry: Entry = { id: doc._id, keys: located.keys, sequence };
    let entries = this.partitions.get(located.partition);
    if (!entries) {
      entries = [];
      this.partitions.set(located.partition, entries);
    }
    entries.splice(this.insertionPoint(entries, entry), 0, entry);
    this.placements.set(doc._id, { partition: located.partition, entry });
  }

  private displace(id: string): void {
    if (this.others.delete(id)) return;
    const placed = this.placements.get(id);
    if (!placed) return;
    this.placements.delete(id);
    const entries = this.partitions.get(placed.partition);
    if (!entries) return;
    const at = this.insertionPoint(entries, placed.entry);
    // The insertion point of an entry present is its own place (keys and sequence are unique).
    if (entries[at]?.id === id) entries.splice(at, 1);
    else entries.splice(entries.indexOf(placed.entry), 1);
    if (entries.length === 0) this.partitions.delete(placed.partition);
  }

  /** The first place whose entry does not sort before `entry`. */
  private insertionPoint(entries: readonly Entry[], entry: Entry): number {
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compare(entries[middle], entry) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The first place whose keys sort strictly after the cursor's values (compared on as many keys as it has). */
  private firstAfter(entries: readonly Entry[], cursor: readonly Scalar[]): number {
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compareKeys(entries[middle].keys, cursor) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The sort's order, then insertion order for full ties: what a scan and a stable sort give. */
  private compare(a: Entry, b: Entry): number {
    return this.compareKeys(a.keys, b.keys) || a.sequence - b.sequence;
  }

  private compareKeys(a: readonly Scalar[], b: readonly Scalar[]): number {
    const length = Math.min(a.length, b.length);
    for (let i = 0; i < length; i++) {
      const order = compareValues(a[i], b[i]) * this.order[i].direction;
      if (order !== 0) return order;
    }
    return 0;
  }
}

function partitionKey(values: readonly Scalar[]): string {
  return values.map((value) => `${typeof value}:${String(value)}`).join('\u0000');
}

function* idsFrom(entries: readonly Entry[], start: number): Generator<string> {
  // A snapshot of the ids: the caller may write while it walks (it does not, but a copy is cheap per page).
  for (let i = start; i < entries.length; i++) yield entries[i].id;
}

/**
 * The values of a keyset cursor, when `$or` is the shape `afterCursor` builds over this order:
 * branch i pins the first i keys and takes the (i+1)th strictly after its value in the sort's
 * direction. Everything at or before those values cannot match, so a walk may start after them.
 */
function keysetCursor(or: unknown, order: readonly SortField[]): Scalar[] | null {
  if (!Array.isArray(or) || or.length === 0 || or.length > order.length) return null;
  const values: Scalar[] = [];
  for (let i = 0; i < or.length; i++) {
    const branch: unknown = or[i];
    if (typeof branch !== 'object' || branch === null) return null;
    if (Object.keys(branch).length !== i + 1) return null;
    const fields = branch as Record<string, unknown>;
    for (let j = 0; j < i; j++) if (pinned(fields[order[j].field]) !== values[j]) return null;
    const bound: unknown = fields[order[i].field];
    const operator = order[i].direction === 1 ? '$gt' : '$lt';
    if (typeof bound !== 'object' || bound === null || Object.keys(bound).length !== 1 || !(operator in bound)) return null;
    const value: unknown = (bound as Record<string, unknown>)[operator];
    if (value === null || value === undefined || !isScalar(value)) return null;
    values.push(value);
  }
  return values;
}
