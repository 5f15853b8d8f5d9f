import type { TrialUsage } from '../contract';
import { ConfigShape, isShape } from '../config-shape';

export const USAGE_FIELDS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const;
export type UsageField = (typeof USAGE_FIELDS)[number];

/**
 * How a configured harness reports token usage in its output. `json-lines`: each field is a
 * dotted path read from every output line that is a JSON object; `regex`: each field is a
 * pattern whose first capture group is the number. `last` keeps the last value seen (agents
 * that print a running or final total), `sum` adds them (agents that print one line per call).
 */
export interface UsageRule {
  format: 'json-lines' | 'regex';
  aggregate: 'last' | 'sum';
  fields: Partial<Record<UsageField, string>>;
  /** Where the agent's final answer is: a dotted path (json-lines) or a pattern with a group (regex); the last one found. */
  finalMessage: string | null;
}

export function parseUsageRule(shape: ConfigShape, value: unknown, at: string): UsageRule {
  const raw = shape.object(value, at, ['format', 'aggregate', 'finalMessage', ...USAGE_FIELDS]);
  if (raw.format !== 'json-lines' && raw.format !== 'regex') shape.fail(`${at}.format`, 'must be json-lines or regex');
  const aggregate = raw.aggregate ?? 'last';
  if (aggregate !== 'last' && aggregate !== 'sum') shape.fail(`${at}.aggregate`, 'must be last or sum');
  const fields: UsageRule['fields'] = {};
  for (const field of USAGE_FIELDS) {
    const rule = raw[field];
    if (rule === undefined || rule === null) continue;
    if (!isShape.string(rule) || rule === '') shape.fail(`${at}.${field}`, 'must be a non-empty string');
    if (raw.format === 'regex') checkPattern(shape, rule, `${at}.${field}`);
    fields[field] = rule;
  }
  if (Object.keys(fields).length === 0) shape.fail(at, `names none of ${USAGE_FIELDS.join(', ')}`);
  return { format: raw.format, aggregate, fields, finalMessage: finalMessageRule(shape, raw.format, raw.finalMessage, `${at}.finalMessage`) };
}

function finalMessageRule(shape: ConfigShape, format: UsageRule['format'], rule: unknown, at: string): string | null {
  if (rule === undefined || rule === null) return null;
  if (!isShape.string(rule) || rule === '') shape.fail(at, 'must be a non-empty string');
  if (format === 'regex') checkPattern(shape, rule, at);
  return rule;
}

/** The agent's final answer as its driver reports it (the last one in the output), or null. */
export function readFinalMessage(rule: UsageRule | null, output: string): string | null {
  if (rule?.finalMessage == null) return null;
  let found: string | null = null;
  if (rule.format === 'regex') {
    for (const match of output.matchAll(new RegExp(rule.finalMessage, 'gm'))) {
      const group = match.at(1);
      // An optional group that took no part in the match is undefined.
      if (group !== undefined) found = group;
    }
    return found;
  }
  for (const parsed of jsonObjects(output)) {
    const value = valueAt(parsed, rule.finalMessage);
    if (typeof value === 'string') found = value;
  }
  return found;
}

function* jsonObjects(output: string): Generator {
  for (const line of output.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{')) continue;
    try {
      yield JSON.parse(trimmed) as unknown;
    } catch {
      continue;
    }
  }
}

function checkPattern(shape: ConfigShape, pattern: string, at: string): void {
  let groups: number;
  try {
    // Matching the empty alternative reports how many groups the pattern has.
    groups = (new RegExp(`${pattern}|`).exec('') ?? []).length - 1;
  } catch (error) {
    return shape.fail(at, `is not a valid regular expression: ${(error as Error).message}`);
  }
  if (groups < 1) shape.fail(at, 'needs a capture group around the number, e.g. "input tokens: (\\d+)"');
}

/** The usage the harness reported, or null when the rule found nothing. */
export function readUsage(rule: UsageRule | null, output: string): TrialUsage | null {
  if (rule === null) return null;
  const found = rule.format === 'regex' ? regexValues(rule, output) : jsonLineValues(rule, output);
  const counts: Record<UsageField, number> = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let matched = false;
  for (const field of USAGE_FIELDS) {
    const values = found[field];
    if (values.length === 0) continue;
    matched = true;
    counts[field] = rule.aggregate === 'sum' ? values.reduce((a, b) => a + b, 0) : values[values.length - 1];
  }
  if (!matched) return null;
  const totalTokens = counts.inputTokens + counts.outputTokens + counts.cacheReadTokens + counts.cacheWriteTokens;
  return { ...counts, totalTokens, costUsd: null };
}

type FoundValues = Record<UsageField, number[]>;

const emptyFound = (): FoundValues => ({ inputTokens: [], outputTokens: [], cacheReadTokens: [], cacheWriteTokens: [] });

function regexValues(rule: UsageRule, output: string): FoundValues {
  const found = emptyFound();
  for (const field of USAGE_FIELDS) {
    const pattern = rule.fields[field];
    if (pattern === undefined) continue;
    for (const match of output.matchAll(new RegExp(pattern, 'gm'))) {
      const count = tokenCount(match[1]);
      if (count !== null) found[field].push(count);
    }
  }
  return found;
}

function jsonLineValues(rule: UsageRule, output: string): FoundValues {
  const found = emptyFound();
  for (const parsed of jsonObjects(output)) {
    for (const field of USAGE_FIELDS) {
      const dotted = rule.fields[field];
      const count = dotted === undefined ? null : tokenCount(valueAt(parsed, dotted));
      if (count !== null) found[field].push(count);
    }
  }
  return found;
}

function valueAt(value: unknown, dotted: string): unknown {
  let current = value;
  for (const key of dotted.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** A non-negative integer from a number or a numeral such as "12,345". */
function tokenCount(value: unknown): number | null {
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.replace(/[,_\s]/g, '')) : NaN;
  return Number.isFinite(number) && number >= 0 && value !== '' ? Math.round(number) : null;
}
