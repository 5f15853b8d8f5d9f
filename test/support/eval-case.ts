import type { EvalCase } from '#shared/eval-definitions';

/** A case as a start records it, every optional part empty: `c`, verified by `true`; override any field. */
export function plainCase(overrides: Partial<EvalCase> = {}): EvalCase {
  return {
    id: 'c',
    name: 'c',
    cache: null,
    maxTurns: null,
    timeoutMs: null,
    user: null,
    prepare: null,
    source: null,
    tags: [],
    variables: {},
    validator: null,
    verify: 'true',
    ...overrides,
  };
}
