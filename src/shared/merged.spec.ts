import { merged } from './merged';

describe('merged', () => {
  it('makes what the spread makes: the same keys in the same order, later values winning', () => {
    const target = { _id: 'a', organization: 'acme', variant: { model: 'm1' }, caseSet: null };
    const tally = { verdicts: 2, passed: 1, commandCounts: { 2: 1 } };
    const overrides = { variant: { model: 'm0' }, _position: 7 };
    const spread = { ...target, ...tally, ...overrides };
    const made = merged(target, tally, overrides);
    expect(made).toEqual(spread);
    expect(Object.keys(made)).toEqual(Object.keys(spread));
    expect(JSON.stringify(made)).toBe(JSON.stringify(spread));
    expect(made.variant).toBe(overrides.variant);
  });

  it('copies, leaving its parts as they were', () => {
    const first = { a: 1, b: 2 };
    const second = { b: 3 };
    const made = merged(first, second);
    expect(made).toEqual({ a: 1, b: 3 });
    expect(first).toEqual({ a: 1, b: 2 });
    expect(made).not.toBe(first);
  });
});
