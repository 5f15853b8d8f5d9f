import { isReservedVariable, reservedVariableMessage } from '#shared/reserved-variables';

/**
 * Small checks for the operator's execution configuration. Every error names the file and the
 * key that is wrong (`harnesses.harness_kind_1.run`), so the operator knows what to fix.
 */
export class ExecutionConfigError extends Error {
  constructor(
    readonly source: string,
    readonly key: string,
    problem: string,
  ) {
    super(key === '' ? `${source}: ${problem}` : `${source}: ${key}: ${problem}`);
    this.name = 'ExecutionConfigError';
  }
}

export const isShape = {
  string: (value: unknown): value is string => typeof value === 'string',
  record: (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value),
};

export class ConfigShape {
  constructor(readonly source: string) {}

  fail(key: string, problem: string): never {
    throw new ExecutionConfigError(this.source, key, problem);
  }

  /** An object whose keys are all in `allowed`; unknown keys are refused by name. */
  object(value: unknown, at: string, allowed: readonly string[], keyDescription?: string): Record<string, unknown> {
    if (!isShape.record(value)) this.fail(at, 'must be a mapping of keys to values');
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        const expected = keyDescription ?? `one of ${allowed.join(', ')}`;
        this.fail(at === '' ? key : `${at}.${key}`, `unknown key; expected ${expected}`);
      }
    }
    return value;
  }
}

export function nonEmptyString(shape: ConfigShape, value: unknown, at: string): string {
  if (value === undefined || value === null) shape.fail(at, 'is required');
  if (!isShape.string(value) || value.trim() === '') shape.fail(at, 'must be a non-empty string');
  return value;
}

export function optionalBoolean(shape: ConfigShape, value: unknown, at: string): boolean | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'boolean') shape.fail(at, 'must be true or false');
  return value;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Environment variables: scalar values are taken as their text (YAML reads `1` as a number).
 * Reserved names (PATH, LD_*…) are refused here too: the operator's harness must not change how
 * the sandbox starts either; a tool outside the PATH is named by its absolute path in `run`.
 */
export function stringMap(shape: ConfigShape, value: unknown, at: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isShape.record(value)) shape.fail(at, 'must be a mapping of variable names to values');
  const result: Record<string, string> = {};
  for (const [name, entry] of Object.entries(value)) {
    if (!ENV_NAME.test(name)) shape.fail(`${at}.${name}`, 'is not a valid environment variable name');
    if (isReservedVariable(name)) shape.fail(`${at}.${name}`, reservedVariableMessage(name));
    if (!['string', 'number', 'boolean'].includes(typeof entry)) shape.fail(`${at}.${name}`, 'must be a string');
    result[name] = String(entry);
  }
  return result;
}
