/**
 * What the MongoDB adapter does to the values it sends so that MongoDB answers as the in-memory
 * store does: documents lose their undefined fields (the memory store copies them as JSON),
 * filters read undefined as null (never as "no condition"), every query has a total order, and
 * the indexes that serve sorted lists end with that order's tie-breaker.
 */
import type { Filter, IndexSpec, Sort } from '../read-store.port';

/** A copy without undefined object fields, and with undefined array elements as null (as JSON does). */
export function withoutUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map((element: unknown) => (element === undefined ? null : withoutUndefined(element))) as T;
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (field !== undefined) copy[key] = withoutUndefined(field);
  return copy as T;
}

/**
 * A filter with every undefined value turned into null, at any depth (inside $and, $in, …).
 * With `ignoreUndefined` the driver would drop `{ _id: undefined }` and match every document;
 * as null it matches only documents without the field, which for `_id` is none.
 */
export function filterWithNulls(filter: Filter): Filter {
  return nullsFor(filter) as Filter;
}

function nullsFor(value: unknown): unknown {
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map(nullsFor);
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) copy[key] = nullsFor(field);
  return copy;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The sort MongoDB is given: the caller's, then `_id` to break its ties (in the direction of its
 * last key, so that an index ending in `_id` the same way serves it), or `_id` alone. Without
 * it MongoDB answers in whatever order the plan it picks yields (index order or natural order).
 */
export function totalOrder(sort: Sort | undefined): Sort {
  if (!sort || Object.keys(sort).length === 0) return { _id: 1 };
  if ('_id' in sort) return sort;
  const directions = Object.values(sort);
  return { ...sort, _id: directions[directions.length - 1] };
}

/**
 * The keys MongoDB indexes: a non-unique index gets `_id` last, in the direction of its last
 * key, so that a list sorted by the index's fields keeps being read from the index once
 * totalOrder adds `_id` to its sort. A unique index has no ties, and `_id` would weaken it.
 */
export function indexKeys(spec: IndexSpec): Record<string, 1 | -1> {
  if (spec.unique === true || '_id' in spec.keys) return spec.keys;
  const directions = Object.values(spec.keys);
  return { ...spec.keys, _id: directions[directions.length - 1] };
}
