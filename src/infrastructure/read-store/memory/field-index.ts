import type { Document, Filter } from '../read-store.port';

type Scalar = string | number | boolean | null;

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** The value at a dotted path through plain objects; `other` when an array or a non-object is in the way. */
function valueAt(doc: Document, path: readonly string[]): unknown {
  let value: unknown = doc;
  for (const part of path) {
    if (value === null || value === undefined) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) return OTHER;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const OTHER = Symbol('other');

/**
 * Narrows a query by equality on some fields, like a prefix of a MongoDB index's keys: documents
 * by the scalars they hold there. A document holding an array or an object in one of them could
 * match a scalar too (an array contains it), so it is always a candidate. Only a narrowing: the
 * query itself still decides.
 */
export class FieldIndex {
  /** A key held by one document maps to its id alone: most keys of a compound prefix are unique. */
  private readonly byValue = new Map<string, string | Set<string>>();
  private readonly others = new Set<string>();
  private readonly paths: string[][];
  /** Built on the first query that can use it, so that a replay (writes by `_id` only) pays nothing. */
  private built = false;

  constructor(readonly fields: readonly string[]) {
    this.paths = fields.map((field) => field.split('.'));
  }

  add(doc: Document): void {
    if (this.built) this.addKey(doc._id, this.documentKey(doc));
  }

  remove(doc: Document): void {
    if (this.built) this.removeKey(doc._id, this.documentKey(doc));
  }

  /** Moves a rewritten document to its new key; most writes leave it where it was. */
  update(previous: Document, next: Document): void {
    if (!this.built) return;
    const before = this.documentKey(previous);
    const after = this.documentKey(next);
    if (before === after) return;
    this.removeKey(previous._id, before);
    this.addKey(next._id, after);
  }

  private addKey(id: string, key: string | null): void {
    if (key === null) {
      this.others.add(id);
      return;
    }
    const held = this.byValue.get(key);
    if (held === undefined) this.byValue.set(key, id);
    else if (typeof held === 'string') {
      if (held !== id) this.byValue.set(key, new Set([held, id]));
    } else held.add(id);
  }

  private removeKey(id: string, key: string | null): void {
    if (key === null) {
      this.others.delete(id);
      return;
    }
    const held = this.byValue.get(key);
    if (held === id) this.byValue.delete(key);
    else if (typeof held !== 'string' && held !== undefined) {
      held.delete(id);
      if (held.size === 1) this.byValue.set(key, held.values().next().value as string);
    }
  }

  /**
   * The ids the filter can only match, or null when it does not fix every field to a scalar.
   * `documents` builds the index the first time it is asked.
   */
  candidates(filter: Filter, documents: () => Iterable<Document>): string[] | null {
    const held = this.held(filter, documents);
    if (held === null) return null;
    const matching = held === undefined ? [] : typeof held === 'string' ? [held] : [...held];
    return this.others.size === 0 ? matching : [...matching, ...this.others];
  }

  /** The bucket of the key the filter fixes (undefined when empty), or null when it fixes none. */
  private held(filter: Filter, documents: () => Iterable<Document>): string | Set<string> | undefined | null {
    const keys: string[] = [];
    for (const field of this.fields) {
      const condition = filter[field];
      const wanted = isPlainEq(condition) ? (condition as { $eq: unknown }).$eq : condition;
      if (!isScalar(wanted)) return null;
      const key = this.keyOf(wanted);
      if (key === null) return null;
      keys.push(key);
    }
    if (!this.built) {
      this.built = true;
      for (const doc of documents()) this.add(doc);
    }
    return this.byValue.get(keys.join('\u0000'));
  }

  /**
   * How many documents match a filter that is exactly equality on this index's fields, counted
   * from the index alone; null for any other filter (or while a document holds a non-scalar there).
   */
  exactCount(filter: Filter, documents: () => Iterable<Document>): number | null {
    const fields = Object.keys(filter);
    if (fields.length !== this.fields.length || !this.fields.every((field) => fields.includes(field))) return null;
    const held = this.held(filter, documents);
    if (held === null || this.others.size > 0) return null;
    return held === undefined ? 0 : typeof held === 'string' ? 1 : held.size;
  }

  private documentKey(doc: Document): string | null {
    if (this.paths.length === 1) return this.keyOf(valueAt(doc, this.paths[0]));
    const keys: string[] = [];
    for (const path of this.paths) {
      const key = this.keyOf(valueAt(doc, path));
      if (key === null) return null;
      keys.push(key);
    }
    return keys.join('\u0000');
  }

  /** Missing and null match the same filters (`{field: null}`), so they share a key. */
  private keyOf(value: unknown): string | null {
    if (value === undefined || value === null) return 'null';
    if (value === OTHER || !isScalar(value)) return null;
    return `${typeof value}:${String(value)}`;
  }
}

function isPlainEq(condition: unknown): boolean {
  return typeof condition === 'object' && condition !== null && !Array.isArray(condition) && Object.keys(condition).length === 1 && '$eq' in condition;
}
