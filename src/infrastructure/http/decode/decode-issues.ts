import type { ValidationError } from 'class-validator';
import { EACH_ELEMENT, ElementFailure } from './each-element';
import type { IssueTag } from './issue-tag';

export type { IssueTag } from './issue-tag';

export interface DecodeIssue {
  _tag: IssueTag;
  path: Array<string | number>;
  message: string;
}

/** Constraints that say the value has the wrong type, as opposed to a broken bound or pattern. */
const TYPE_CONSTRAINTS = new Set([
  'isString',
  'isInt',
  'isNumber',
  'isBoolean',
  'isObject',
  'isArray',
  'isEnum',
  'isIn',
  'equals',
  'nestedValidation',
  'isStringRecord',
  'isPlainObject',
]);

/** Custom constraints raised by this project's own validators, by tag. */
const TAGGED_CONSTRAINTS: Record<string, IssueTag> = {
  whitelistValidation: 'Unexpected',
  composite: 'Composite',
  unexpectedProperty: 'Unexpected',
};

/**
 * Turns class-validator's error tree into the spec's flat issue list, with paths of keys and
 * numeric indexes. One issue per path: the most fundamental problem there (a missing value
 * before a wrong type, a wrong type before a broken bound).
 */
export function toDecodeIssues(errors: ValidationError[], parentPath: Array<string | number> = [], issues: DecodeIssue[] = []): DecodeIssue[] {
  for (const error of errors) {
    const path = [...parentPath, pathKey(error.property)];
    const constraints = error.constraints ?? {};
    const names = Object.keys(constraints);
    // Appended one by one: `push(...list)` passes the list as arguments, and a list of 100,000
    // issues overflows the stack (a 500).
    if (constraints[EACH_ELEMENT] && names.length === 1) for (const issue of elementIssues(error, path, constraints[EACH_ELEMENT])) issues.push(issue);
    else if (names.length > 0)
      issues.push(
        issueFor(
          error,
          path,
          names.filter((n) => n !== EACH_ELEMENT),
          constraints,
        ),
      );
    // A union no member matched has no member's fields to report: the Composite issue says it all.
    if (error.children && error.children.length > 0 && !constraints.composite) toDecodeIssues(error.children, path, issues);
  }
  return issues;
}

function elementIssues(error: ValidationError, path: Array<string | number>, encoded: string): DecodeIssue[] {
  const failure = JSON.parse(encoded) as ElementFailure;
  const elements = error.value as unknown[];
  return failure.indexes.map((index) => ({
    _tag: elements[index] === null || typeof elements[index] !== 'string' ? 'Type' : failure.tag,
    path: [...path, index],
    message: `${failure.message}, actual ${describe(elements[index])}`,
  }));
}

function pathKey(property: string): string | number {
  // class-validator names array elements by their index as a string.
  return /^(0|[1-9]\d*)$/.test(property) ? Number(property) : property;
}

function issueFor(error: ValidationError, path: Array<string | number>, names: string[], constraints: Record<string, string>): DecodeIssue {
  const tagged = names.find((name) => Object.hasOwn(TAGGED_CONSTRAINTS, name));
  if (tagged) return { _tag: TAGGED_CONSTRAINTS[tagged], path, message: constraints[tagged] };
  if (error.value === undefined) return { _tag: 'Missing', path, message: 'is missing' };
  const typeName = names.find((name) => TYPE_CONSTRAINTS.has(name));
  if (typeName) return { _tag: 'Type', path, message: typeMessage(typeName, constraints[typeName], error.value) };
  return { _tag: 'Refinement', path, message: names.map((name) => constraints[name]).join('; ') };
}

function typeMessage(name: string, message: string, value: unknown): string {
  const actual = describe(value);
  if (name === 'nestedValidation') return `Expected an object, actual ${actual}`;
  return `${message}, actual ${actual}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (typeof value === 'object') return 'an object';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects, arrays and null are described above; what is left are primitives
  return String(value);
}

/**
 * The issues found while building the instance (nested shapes, arrays past their bound) with
 * class-validator's. Each of the former is the most fundamental problem at its path: what
 * class-validator says there or beneath it (about the stray array, or the empty one put in
 * place of an array too long) goes.
 */
export function mergeIssues(buildIssues: DecodeIssue[], validatorIssues: DecodeIssue[]): DecodeIssue[] {
  if (buildIssues.length === 0) return validatorIssues;
  const key = (path: Array<string | number>) => JSON.stringify(path);
  const built = new Set(buildIssues.map((issue) => key(issue.path)));
  // Prefixes, not a scan of the built issues: a body is at most 64 levels deep, its issues many.
  const covered = (issue: DecodeIssue) => issue.path.some((_part, index) => built.has(key(issue.path.slice(0, index + 1))));
  return [...buildIssues, ...validatorIssues.filter((issue) => !covered(issue))];
}

/** A one-line summary of the issues for the error's `message`. */
export function summarizeIssues(issues: DecodeIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path.map((key) => `[${JSON.stringify(key)}]`).join('') || 'body'}: ${issue.message}`);
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  return `The request body does not match the expected schema. ${shown.join('; ')}${more}`;
}
