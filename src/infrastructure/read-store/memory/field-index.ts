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
  private readonly byValue = new Map<string, Set<string>>();
  private readonly others = new Set<string>();
  private readonly paths: string[][];

  constructor(readonly fields: readonly string[]) {
    this.paths = fields.map((field) => field.split('.'));
  }

  add(doc: Document): void {
    const key = this.documentKey(doc);
    if (key === null) this.others.add(doc._id);
    else {
      const ids = this.byValue.get(key);
      if (ids) ids.add(doc._id);
      else this.byValue.set(key, new Set([doc._id]));
    }
  }

  remove(doc: Document): void {
    const key = this.documentKey(doc);
    if (key === null) this.others.delete(doc._id);
    else {
      const ids = this.byValue.get(key);
      ids?.delete(doc._id);
      if (ids?.size === 0) this.byValue.delete(key);
    }
  }

  /** True when a write moves the document to another key (or none). */
  moves(previous: Document, next: Document): boolean {
    return this.documentKey(previous) !== this.documentKey(next);
  }

  /** The ids the filter can only match, or null when it does not fix every field to a scalar. */
  candidates(filter: Filter): string[] | null {
    const keys: string[] = [];
    for (const field of this.fields) {
      const condition = filter[field];
      const wanted = isPlainEq(condition) ? (condition as { $eq: unknown }).$eq : condition;
      if (!isScalar(wanted)) return null;
      keys.push(this.keyOf(wanted)!);
    }
    return [...(this.byValue.get(keys.join('\u0000')) ?? []), ...this.others];
  }

  private documentKey(doc: Document): string | null {
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
