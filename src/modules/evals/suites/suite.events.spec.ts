import type { EvalSuite } from '#shared/eval-definitions';
import { SuiteDefined, suiteDecider } from './suite.events';
import { given } from '../../../../test/support/decider-spec';

const now = new Date('2026-01-01T00:00:00.000Z');

describe('the suite decider: a version only on a change', () => {
  const suite = (prompt: string): EvalSuite => ({ id: 's1', name: 'Suite', prompt, source: null });
  const define = (prompt: string) => ({ organization: 'acme', suite: suite(prompt), now });
  const defined = (prompt: string): SuiteDefined => ({
    type: 'SuiteDefined',
    data: { organization: 'acme', suite: suite(prompt), definedAt: now.toISOString() },
  });

  it('records the first definition', () => {
    given(suiteDecider, [])
      .when(define('Do {{task}}'))
      .then([defined('Do {{task}}')]);
  });

  it('appends nothing for the same definition, and a new one when it changed', () => {
    given(suiteDecider, [defined('Do {{task}}')])
      .when(define('Do {{task}}'))
      .then([]);
    given(suiteDecider, [defined('Do {{task}}')])
      .when(define('Do it'))
      .then([defined('Do it')]);
  });
});
