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
 * reserved keys at every depth, objects of more than MAX_KEYS_PER_OBJECT properties, and nesting
 * past MAX_BODY_DEPTH (reported once, where it starts).
 */
export function bodyShapeIssues(body: object): DecodeIssue[] {
  const issues: DecodeIssue[] = [];
  const pending: Visit[] = [{ value: body, key: null, parent: null, depth: 1 }];
  for (let visit = pending.pop(); visit; visit = pending.pop()) {
    if (visit.depth > MAX_BODY_DEPTH) {
      issues.push({ _tag: 'Refinement', path: pathOf(visit), message: `nests deeper than ${MAX_BODY_DEPTH} levels` });
      break;
    }
    const children = visitMembers(visit, issues);
    for (let index = children.length - 1; index >= 0; index -= 1) pending.push(children[index]);
  }
  return issues;
}

/** The containers directly inside a visited one; its reserved keys, or too many keys, become issues. */
function visitMembers(visit: Visit, issues: DecodeIssue[]): Visit[] {
  const children: Visit[] = [];
  const member = (key: string | number, value: unknown) => {
    if (value !== null && typeof value === 'object') children.push({ value, key, parent: visit, depth: visit.depth + 1 });
  };
  if (Array.isArray(visit.value)) {
    visit.value.forEach((element: unknown, index) => member(index, element));
    return children;
  }
  const keys = Object.keys(visit.value);
  if (keys.length > MAX_KEYS_PER_OBJECT) {
    issues.push({ _tag: 'Refinement', path: pathOf(visit), message: `has ${keys.length} properties; an object may have at most ${MAX_KEYS_PER_OBJECT}` });
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
