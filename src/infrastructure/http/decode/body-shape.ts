import type { DecodeIssue } from './decode-issues';

/**
 * Keys that class-transformer cannot take: it drops `__proto__` and `constructor` silently, and
 * fails outright (a TypeError, so a 500) on an object whose own `constructor` is not a class.
 * A body that uses them is refused instead, at every depth.
 */
const RESERVED_KEYS = new Set(['__proto__', 'constructor']);

/**
 * No request of the spec nests past a dozen levels. A deeper body is refused before anything
 * recursive (class-transformer, class-validator) runs out of stack on it.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * The most properties one object of a body may have. The largest free-form maps of the spec
 * (a case's `variables`, a `files` source, a profile's `env` and `files`, a connector's
 * `values`) are written by hand or by a tool from a handful of names; a thousand leaves room.
 * Every step of decoding is linear in the keys, but a bound keeps one object from making a
 * request's issue list, and its cost, as large as the body allows.
 */
export const MAX_KEYS_PER_OBJECT = 1000;

/** The most elements one array may have: the spec's longest list is a start's 100 cases. */
export const MAX_ELEMENTS_PER_ARRAY = 1000;

/**
 * The most properties and elements a whole body may hold. The largest start the spec bounds
 * holds about 12,000 (100 cases of some 120 each, manifests and replies included), plus the
 * entries of its free-form maps. Decoding costs up to ~20 µs a member where every member
 * fails (class-validator builds an error for each), so this keeps a refused body to a couple
 * of seconds of work at worst, where the per-object bounds alone would allow millions.
 */
export const MAX_MEMBERS_PER_BODY = 100_000;

/** A container met on the walk, with the way back to the root for the issue's path. */
interface Visit {
  value: object;
  key: string | number | null;
  parent: Visit | null;
  depth: number;
}

function pathOf(visit: Visit, last?: string | number): Array<string | number> {
  const path: Array<string | number> = last === undefined ? [] : [last];
  for (let at: Visit | null = visit; at && at.key !== null; at = at.parent) path.unshift(at.key);
  return path;
}

/**
 * What no schema can accept in a parsed JSON body, found without recursion, in document order:
 * reserved keys at every depth, objects and arrays of more than MAX_KEYS_PER_OBJECT properties or
 * MAX_ELEMENTS_PER_ARRAY elements, and (each reported once, where it is passed) nesting past
 * MAX_BODY_DEPTH or more than MAX_MEMBERS_PER_BODY members in all.
 */
export function bodyShapeIssues(body: object): DecodeIssue[] {
  const issues: DecodeIssue[] = [];
  const pending: Visit[] = [{ value: body, key: null, parent: null, depth: 1 }];
  let members = 0;
  for (let visit = pending.pop(); visit; visit = pending.pop()) {
    if (visit.depth > MAX_BODY_DEPTH) {
      issues.push({ _tag: 'Refinement', path: pathOf(visit), message: `nests deeper than ${MAX_BODY_DEPTH} levels` });
      break;
    }
    const keys = Array.isArray(visit.value) ? null : Object.keys(visit.value);
    const oversized = sizeIssue(visit, keys);
    if (oversized) {
      issues.push(oversized);
      continue;
    }
    members += keys ? keys.length : (visit.value as unknown[]).length;
    if (members > MAX_MEMBERS_PER_BODY) {
      issues.push({ _tag: 'Refinement', path: [], message: `holds more than ${MAX_MEMBERS_PER_BODY} properties and elements in all` });
      break;
    }
    const children = visitMembers(visit, keys, issues);
    for (let index = children.length - 1; index >= 0; index -= 1) pending.push(children[index]);
  }
  return issues;
}

/** An object or array with more members than one may have: not walked further. */
function sizeIssue(visit: Visit, keys: string[] | null): DecodeIssue | null {
  if (keys && keys.length > MAX_KEYS_PER_OBJECT) {
    return { _tag: 'Refinement', path: pathOf(visit), message: `has ${keys.length} properties; an object may have at most ${MAX_KEYS_PER_OBJECT}` };
  }
  const length = keys ? 0 : (visit.value as unknown[]).length;
  if (length > MAX_ELEMENTS_PER_ARRAY) {
    return { _tag: 'Refinement', path: pathOf(visit), message: `has ${length} elements; an array may have at most ${MAX_ELEMENTS_PER_ARRAY}` };
  }
  return null;
}

/** The containers directly inside a visited one (`keys`: an object's own keys); its reserved keys become issues. */
function visitMembers(visit: Visit, keys: string[] | null, issues: DecodeIssue[]): Visit[] {
  const children: Visit[] = [];
  const member = (key: string | number, value: unknown) => {
    if (value !== null && typeof value === 'object') children.push({ value, key, parent: visit, depth: visit.depth + 1 });
  };
  if (!keys) {
    (visit.value as unknown[]).forEach((element: unknown, index) => member(index, element));
    return children;
  }
  for (const key of keys) {
    if (RESERVED_KEYS.has(key)) {
      issues.push({ _tag: 'Unexpected', path: pathOf(visit, key), message: `"${key}" is a reserved name and cannot be a property; rename it` });
    } else {
      member(key, (visit.value as Record<string, unknown>)[key]);
    }
  }
  return children;
}
