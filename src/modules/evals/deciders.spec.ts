import { batchSlotsDecider, BatchSlotEvent } from './batches/batch-slots.decider';
import { caseDecider } from './cases/case.decider';
import type { CaseEvent } from './cases/case.events';
import type { EvalCase, EvalSuite, VariantDefinition } from '#shared/eval-definitions';
import { definitionHash, definitionParts } from './shared/identity';
import { TrialScheduler } from './orchestration/trial-scheduler';
import { Conflict } from '#shared/errors';
import { given } from '../../../test/support/decider-spec';
import { plainCase } from '../../../test/support/eval-case';

const now = new Date('2026-01-01T00:00:00.000Z');
const taken = (batchId: string): BatchSlotEvent => ({ type: 'BatchSlotTaken', data: { organization: 'o', batchId, takenAt: now.toISOString() } });
const released = (batchId: string): BatchSlotEvent => ({
  type: 'BatchSlotReleased',
  data: { organization: 'o', batchId, releasedAt: now.toISOString(), reason: 'the batch ended' },
});
const take = (batchId: string) => ({ type: 'TakeSlot' as const, organization: 'o', batchId, now });

describe('the batch slots decider: the rule of three', () => {
  it('takes a slot while fewer than three are held', () => {
    given(batchSlotsDecider, [taken('a'), taken('b')])
      .when(take('c'))
      .then([taken('c')]);
  });

  it('refuses a fourth with the message that says to wait', () => {
    given(batchSlotsDecider, [taken('a'), taken('b'), taken('c')])
      .when(take('d'))
      .thenThrows(Conflict, 'This organization already has 3 batches running, and may have 3 at once. Wait for one to finish.');
  });

  it('admits again once a slot was released, and releasing twice appends nothing', () => {
    given(batchSlotsDecider, [taken('a'), taken('b'), taken('c'), released('b')])
      .when(take('d'))
      .then([taken('d')]);
    given(batchSlotsDecider, [taken('a'), released('a')])
      .when({ type: 'ReleaseSlot', organization: 'o', batchId: 'a', reason: 'x', now })
      .then([]);
  });

  it('taking a slot a batch already holds appends nothing', () => {
    given(batchSlotsDecider, [taken('a')])
      .when(take('a'))
      .then([]);
  });
});

describe('the case decider: versions only on a change', () => {
  const suite: EvalSuite = { id: 's', name: 's', prompt: 'Do {{task}}', source: null };
  const evalCase = (task: string, verify = 'true'): EvalCase => plainCase({ variables: { task }, verify });
  const record = (definition: EvalCase) => ({
    type: 'RecordCaseRun' as const,
    organization: 'o',
    suiteId: 's',
    definition,
    parts: definitionParts(suite, definition),
    variants: [],
    author: 'me',
    now,
  });
  const version = (definition: EvalCase, changes: string[]): CaseEvent => ({
    type: 'CaseVersionAppended',
    data: {
      organization: 'o',
      caseId: 'c',
      suiteId: 's',
      definition,
      parts: definitionParts(suite, definition),
      definitionHash: definitionHash(definitionParts(suite, definition)),
      changes,
      author: 'me',
      createdAt: now.toISOString(),
    },
  });

  it('appends a first version with no changes', () => {
    given(caseDecider, [])
      .when(record(evalCase('a')))
      .then([version(evalCase('a'), [])]);
  });

  it('appends nothing for the same definition', () => {
    given(caseDecider, [version(evalCase('a'), [])])
      .when(record(evalCase('a')))
      .then([]);
  });

  it('names the parts that changed', () => {
    given(caseDecider, [version(evalCase('a'), [])])
      .when(record(evalCase('b', 'false')))
      .then([version(evalCase('b', 'false'), ['prompt', 'verifier'])]);
  });

  const variant = (model: string): VariantDefinition => ({ harness: 'command', model, profile: { run: 'true' }, sandbox: null, credentials: null });
  const onVariant = (model: string) => ({ ...record(evalCase('a')), variants: [{ variantId: 'var_1', variant: variant(model), userModel: null }] });
  const variantDefined = (model: string): CaseEvent => ({
    type: 'CaseVariantDefined',
    data: { organization: 'o', caseId: 'c', variantId: 'var_1', variant: variant(model), userModel: null, definedAt: now.toISOString() },
  });

  it('defines a variant when first seen or changed, and appends nothing for one already defined alike', () => {
    given(caseDecider, [version(evalCase('a'), [])])
      .when(onVariant('m1'))
      .then([variantDefined('m1')]);
    given(caseDecider, [version(evalCase('a'), []), variantDefined('m1')])
      .when(onVariant('m1'))
      .then([]);
    given(caseDecider, [version(evalCase('a'), []), variantDefined('m1')])
      .when(onVariant('m2'))
      .then([variantDefined('m2')]);
  });
});

describe('the trial scheduler', () => {
  it('shares places fairly between batches and never exceeds its parallelism', async () => {
    const order: string[] = [];
    let running = 0;
    let peak = 0;
    const finishers: Array<() => void> = [];
    const scheduler = new TrialScheduler(2, (trialId) => {
      order.push(trialId);
      running += 1;
      peak = Math.max(peak, running);
      return new Promise<void>((resolve) =>
        finishers.push(() => {
          running -= 1;
          resolve();
        }),
      );
    });
    for (const id of ['a1', 'a2', 'a3', 'a4']) scheduler.enqueue('A', id);
    for (const id of ['b1', 'b2']) scheduler.enqueue('B', id);
    scheduler.enqueue('A', 'a1');
    while (finishers.length > 0) {
      finishers.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(peak).toBe(2);
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'b2', 'a4']);
  });
});
