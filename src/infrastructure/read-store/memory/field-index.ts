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
 * Narrows a query by equality on one field, like the leading key of a MongoDB index: documents
 * by the scalar they hold there. Documents holding an array or an object there could match a
 * scalar too (an array contains it), so they are always candidates. Only a narrowing: the query
 * itself still decides.
 */
export class FieldIndex {
  private readonly byValue = new Map<string, Set<string>>();
  private readonly others = new Set<string>();
  private readonly path: string[];

  constructor(readonly field: string) {
    this.path = field.split('.');
  }

  add(doc: Document): void {
    const key = this.keyOf(valueAt(doc, this.path));
    if (key === null) this.others.add(doc._id);
    else {
      const ids = this.byValue.get(key);
      if (ids) ids.add(doc._id);
      else this.byValue.set(key, new Set([doc._id]));
    }
  }

  remove(doc: Document): void {
    const key = this.keyOf(valueAt(doc, this.path));
    if (key === null) this.others.delete(doc._id);
    else {
      const ids = this.byValue.get(key);
      ids?.delete(doc._id);
      if (ids?.size === 0) this.byValue.delete(key);
    }
  }

  /** True when a write moves the document to another key (or none). */
  moves(previous: Document, next: Document): boolean {
    return this.keyOf(valueAt(previous, this.path)) !== this.keyOf(valueAt(next, this.path));
  }

  /** The ids the filter can only match, or null when it does not fix this field to a scalar. */
  candidates(filter: Filter): string[] | null {
    const condition = filter[this.field];
    const wanted = isPlainEq(condition) ? (condition as { $eq: unknown }).$eq : condition;
    if (!isScalar(wanted)) return null;
    return [...(this.byValue.get(this.keyOf(wanted)!) ?? []), ...this.others];
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
