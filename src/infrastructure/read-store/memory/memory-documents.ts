/**
 * Document helpers for the in-memory read store: copying, comparison in MongoDB's sort order,
 * dot-path access, the upsert seed MongoDB derives from a filter, and unique index bookkeeping.
 * Documents are JSON-safe, which is what lets the copy and comparison be this simple and fast.
 */
import { Query } from 'mingo';
import type { Document, Filter, IndexSpec, Sort } from '../read-store.port';

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Deep copy, several times faster than structuredClone on small JSON documents (the replay hot
 * path). Keys holding `undefined` are dropped, as the MongoDB adapter's driver does. `for...in`
 * rather than Object.keys: no array of keys per object, and a plain object inherits no
 * enumerable key.
 */
export function deepCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const items = value as unknown[];
    const copy: unknown[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      copy[i] = item === undefined ? null : deepCopy(item);
    }
    return copy as T;
  }
  if (!isPlainObject(value)) return structuredClone(value);
  const copy: Plain = {};
  for (const key in value) {
    const field = value[key];
    if (field !== undefined) copy[key] = typeof field === 'object' && field !== null ? deepCopy(field) : field;
  }
  return copy as T;
}

/**
 * Freezes a document the store holds, and everything in it, in place. The store never changes a
 * document it holds (a write replaces it with a changed copy), so one frozen once stays frozen
 * and valid, and the next read of it costs one check.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const key of Object.keys(value)) deepFreeze((value as Plain)[key]);
  return Object.freeze(value);
}

/** Equality that, like BSON, treats a different field order as a different document. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameValue(item, other[i]));
  }
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key, i) => key === bKeys[i] && sameValue((a as Plain)[key], (b as Plain)[key]));
}

/** What an empty array contributes: MongoDB sorts it below null and indexes it apart from null. */
export const EMPTY_ARRAY = Symbol('empty array');

/**
 * Every value a dot path reaches, descending into arrays the way MongoDB indexes and sorts do
 * (`tags` over `['a','b']` reaches both); an unreachable path yields `[undefined]`.
 */
export function valuesAt(value: unknown, path: string[]): unknown[] {
  if (path.length === 0) {
    if (!Array.isArray(value)) return [value];
    return value.length === 0 ? [EMPTY_ARRAY] : value;
  }
  if (Array.isArray(value)) {
    const [head, ...rest] = path;
    if (/^\d+$/.test(head)) return valuesAt(value[Number(head)], rest);
    const reached = value.flatMap((item) => (isPlainObject(item) ? valuesAt(item, path) : []));
    return reached.length === 0 ? [undefined] : reached;
  }
  if (!isPlainObject(value)) return [undefined];
  return valuesAt(value[path[0]], path.slice(1));
}

/** MongoDB's comparison order across types: null/missing, numbers, strings, objects, arrays, booleans, dates. */
function typeRank(value: unknown): number {
  if (value === EMPTY_ARRAY) return 0;
  if (value === null || value === undefined) return 1;
  if (typeof value === 'number') return 2;
  if (typeof value === 'string') return 3;
  if (Array.isArray(value)) return 5;
  if (typeof value === 'boolean') return 8;
  if (value instanceof Date) return 9;
  return 4;
}

export function compareValues(a: unknown, b: unknown): number {
  const rank = typeRank(a) - typeRank(b);
  if (rank !== 0) return rank;
  if (a === null || a === undefined || a === EMPTY_ARRAY) return 0;
  if (a instanceof Date) return a.getTime() - (b as Date).getTime();
  if (typeof a === 'object') return compareValues(JSON.stringify(a), JSON.stringify(b));
  if (a === b) return 0;
  return (a as number | string | boolean) < (b as number | string | boolean) ? -1 : 1;
}

/** An array field sorts by its smallest element ascending and its largest descending. */
function sortKey(doc: Document, path: string[], direction: 1 | -1): unknown {
  const values = valuesAt(doc, path);
  let best = values[0];
  for (const value of values) {
    if (compareValues(value, best) * direction < 0) best = value;
  }
  return best;
}

/** Sorts in place; Array.prototype.sort is stable, so full ties keep insertion order. */
export function sortDocuments<T extends Document>(docs: T[], sort: Sort): T[] {
  const fields = Object.entries(sort).map(([field, direction]) => ({ path: field.split('.'), direction }));
  if (fields.length === 0) return docs;
  const keyed = docs.map((doc) => ({ doc, keys: fields.map((f) => sortKey(doc, f.path, f.direction)) }));
  keyed.sort((x, y) => {
    for (let i = 0; i < fields.length; i++) {
      const order = compareValues(x.keys[i], y.keys[i]) * fields[i].direction;
      if (order !== 0) return order;
    }
    return 0;
  });
  keyed.forEach((entry, i) => (docs[i] = entry.doc));
  return docs;
}

function setPath(target: Plain, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(node[part])) node[part] = {};
    node = node[part] as Plain;
  }
  node[parts[parts.length - 1]] = deepCopy(value);
}

function isOperatorObject(value: unknown): value is Plain {
  return isPlainObject(value) && Object.keys(value).some((key) => key.startsWith('$'));
}

/**
 * The document an upsert starts from when nothing matched: MongoDB keeps the filter's equality
 * conditions (`field: value`, `field: {$eq: value}`, also inside `$and`) and drops the rest.
 */
export function upsertSeed(filter: Filter, seed: Plain = {}): Plain {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const clause of condition) if (isPlainObject(clause)) upsertSeed(clause, seed);
    } else if (field.startsWith('$') || condition instanceof RegExp) {
      continue;
    } else if (isOperatorObject(condition)) {
      if ('$eq' in condition) setPath(seed, field, condition.$eq);
    } else {
      setPath(seed, field, condition);
    }
  }
  return seed;
}

/** Names an index as MongoDB does by default, e.g. `org_1_createdAt_-1`. */
export function indexName(spec: IndexSpec): string {
  return Object.entries(spec.keys)
    .map(([field, direction]) => `${field}_${direction}`)
    .join('_');
}

/**
 * A unique index: which `_id` owns each key. As in MongoDB a missing field indexes as null, and
 * an array field contributes one key per element. Compound keys cross every reached value, which
 * is stricter than MongoDB only for several fields under one array of subdocuments.
 *
 * A string value of a single top-level field is its own key (the document's string, whose hash
 * the engine keeps): no key is built per write. Every other value is keyed by NUL and its JSON,
 * which no string's own key can equal (a string starting with NUL is keyed the same way, and its
 * JSON starts with a quote, which no other value's does).
 */
export class UniqueIndex {
  private readonly owners = new Map<string, string>();
  private readonly paths: string[][];
  private readonly field: string | null;
  /** False while the documents it covers are known to satisfy it but have not been read into it. */
  private built = true;

  constructor(spec: IndexSpec) {
    this.paths = Object.keys(spec.keys).map((field) => field.split('.'));
    this.field = this.paths.length === 1 && this.paths[0].length === 1 ? this.paths[0][0] : null;
  }

  /**
   * An index over documents that satisfied it when they were captured (a snapshot): they are
   * read into it by the first write that needs it, not now.
   */
  static deferred(spec: IndexSpec): UniqueIndex {
    const index = new UniqueIndex(spec);
    index.built = false;
    return index;
  }

  /** Reads the documents into a deferred index; nothing once it is built. */
  ensureBuilt(documents: () => Iterable<Document>): void {
    if (this.built) return;
    this.built = true;
    for (const doc of documents()) this.add(doc);
  }

  /**
   * The one key of a document whose single indexed field holds a scalar (the common case, with no
   * array built per write); null when keysOf is needed.
   */
  scalarKeyOf(doc: Document): string | null {
    if (this.field === null) return null;
    const value = (doc as Record<string, unknown>)[this.field];
    return value === null || typeof value !== 'object' ? singleKey(value) : null;
  }

  /** The document owning a key, if any. */
  ownerOf(key: string): string | undefined {
    return this.owners.get(key);
  }

  /** Moves a document's one key (scalarKeyOf) from `before` (null: it had none) to `key`. */
  moveKey(id: string, before: string | null, key: string): void {
    if (!this.built) return;
    if (before !== null && this.owners.get(before) === id) this.owners.delete(before);
    this.owners.set(key, id);
  }

  keysOf(doc: Document): string[] {
    if (this.field !== null) {
      const value = (doc as Record<string, unknown>)[this.field];
      // The common case, one scalar, without building intermediate arrays.
      if (value === null || typeof value !== 'object') return [singleKey(value)];
      return [...new Set(valuesAt(value, []).map(singleKey))];
    }
    let keys: unknown[][] = [[]];
    for (const path of this.paths) {
      const reached = valuesAt(doc, path).map((v) => (v === EMPTY_ARRAY ? '[]' : JSON.stringify(v ?? null)));
      const values = [...new Set(reached)];
      keys = keys.flatMap((prefix) => values.map((value) => [...prefix, value]));
    }
    return keys.map((key) => key.join('\u0000'));
  }

  /** True when another document already owns one of these keys. */
  conflicts(keys: readonly string[], id: string): boolean {
    for (const key of keys) {
      const owner = this.owners.get(key);
      if (owner !== undefined && owner !== id) return true;
    }
    return false;
  }

  add(doc: Document, keys: readonly string[] = this.keysOf(doc)): void {
    if (!this.built) return;
    for (const key of keys) this.owners.set(key, doc._id);
  }

  remove(doc: Document, keys: readonly string[] = this.keysOf(doc)): void {
    if (!this.built) return;
    for (const key of keys) {
      if (this.owners.get(key) === doc._id) this.owners.delete(key);
    }
  }
}

/** A condition tested without mingo: true or false, or undefined when only mingo can tell. */
type FieldTest = (held: unknown) => boolean | undefined;

const RANGES: Record<string, (held: number, bound: number) => boolean> = {
  $gt: (held, bound) => held > bound,
  $gte: (held, bound) => held >= bound,
  $lt: (held, bound) => held < bound,
  $lte: (held, bound) => held <= bound,
};

const PLAIN_VALUE_TYPES = ['string', 'number', 'boolean'];

/** A value equality can test directly (NaN aside, which MongoDB and `===` disagree on). */
function isPlainValue(value: unknown): boolean {
  return PLAIN_VALUE_TYPES.includes(typeof value) && !Number.isNaN(value);
}

/** The direct test of one top-level field's condition, or null when it needs mingo. */
function fieldTest(condition: unknown): FieldTest | null {
  if (isPlainValue(condition)) {
    return (held) => held === condition || (Array.isArray(held) && held.includes(condition));
  }
  if (!isPlainObject(condition)) return null;
  const operators = Object.keys(condition);
  if (operators.length === 1 && operators[0] === '$in') return inTest(condition.$in);
  const bounds = Object.entries(condition);
  if (bounds.length === 0 || !bounds.every(([operator, bound]) => Object.hasOwn(RANGES, operator) && Number.isFinite(bound))) return null;
  const checks = bounds.map(([operator, bound]) => [RANGES[operator], bound as number] as const);
  // A number compares directly; anything else (an array, a string, nothing) as MongoDB says, through mingo.
  return (held) => (Number.isFinite(held) ? checks.every(([check, bound]) => check(held as number, bound)) : undefined);
}

/**
 * `$in` of plain values (a run's trials by `runId`): the field holds one of them, or is an array
 * holding one, as in MongoDB. A list with anything else (null, an object, a regex) goes to mingo.
 */
function inTest(values: unknown): FieldTest | null {
  if (!Array.isArray(values) || !values.every(isPlainValue)) return null;
  const wanted = new Set<unknown>(values);
  return (held) => wanted.has(held) || (Array.isArray(held) && held.some((element) => wanted.has(element)));
}

/** The key of one value of a single-field index: a string itself, anything else NUL and its JSON. */
function singleKey(value: unknown): string {
  if (typeof value === 'string' && value.charCodeAt(0) !== 0) return value;
  return `\u0000${value === EMPTY_ARRAY ? '[]' : JSON.stringify(value ?? null)}`;
}

/**
 * A filter's test. The common filters of projections and queries, equality on top-level fields
 * with plain values (an array field matches when it holds the value, as in MongoDB) and number
 * ranges on numbers, are tested directly; anything else goes to mingo.
 */
export function compileFilter(filter: Record<string, unknown>): (doc: Document) => boolean {
  const tests: Array<[string, FieldTest]> = [];
  for (const [field, condition] of Object.entries(filter)) {
    const test = field.startsWith('$') || field.includes('.') ? null : fieldTest(condition);
    if (test === null) {
      const query = new Query(filter);
      return (doc) => query.test(doc);
    }
    tests.push([field, test]);
  }
  let query: Query | undefined;
  return (doc) => {
    for (const [field, test] of tests) {
      const passed = test((doc as Record<string, unknown>)[field]);
      if (passed === false) return false;
      if (passed === undefined) return (query ??= new Query(filter)).test(doc);
    }
    return true;
  };
}
