import { emptyTally, Tally } from '../tally';
import { ComparedSide, compareSides } from './comparison';
import { passRateDifference } from './pass-rate-difference';

const tally = (passed: number, failed: number, voided = 0): Tally => ({ ...emptyTally(), verdicts: passed + failed + voided, passed, failed, voided });

/** A side of one batch: `cases` maps a case id to its tally. */
function side(name: string, cases: Record<string, Tally>): ComparedSide {
  return {
    batchId: null,
    variantKey: `vk_${name}`,
    variant: { harness: 'command', model: 'none', profileVersion: null, profileName: name },
    cases: new Map(Object.entries(cases).map(([caseId, caseTally]) => [caseId, { caseName: caseId, tally: caseTally }])),
  };
}

const cases = (count: number, make: (index: number) => Tally) =>
  Object.fromEntries(Array.from({ length: count }, (_, index) => [`case-${index + 1}`, make(index)]));

describe('the comparison verdict', () => {
  it('says 9/9 against 2/9 over 3 cases cannot be told apart, and why, with the difference and its interval', () => {
    const careful = side(
      'careful',
      cases(3, () => tally(3, 0)),
    );
    const sloppy = side(
      'sloppy',
      cases(3, (index) => (index < 2 ? tally(1, 2) : tally(0, 3))),
    );
    const [test] = compareSides([careful, sloppy], false).tests;
    expect(test).toMatchObject({
      conclusion: 'too-few-cases',
      significant: false,
      comparedCases: 3,
      differingCases: 3,
      pValue: 0.25,
      smallestPossiblePValue: 0.25,
      casesNeeded: 6,
      method: expect.stringContaining('sign-flip permutation test over cases, each weighted by its trials'),
    });
    expect(test.verdict).toMatch(/^Not enough cases to tell: with 3 cases the smallest possible p is 0\.25; at least 6 are needed\./);
    expect(test.difference?.estimate).toBeCloseTo(2 / 9 - 1, 12);
    expect(test.verdict).toContain('command/none (sloppy) − command/none (careful): −78 points of pass rate [95% CI ');
    expect(test.difference?.interval?.low).toBeLessThanOrEqual(test.difference!.estimate);
    expect(test.difference?.interval?.high).toBeGreaterThanOrEqual(test.difference!.estimate);
  });

  it('finds a difference on six cases of six, naming the test', () => {
    const [test] = compareSides(
      [
        side(
          'a',
          cases(6, () => tally(3, 0)),
        ),
        side(
          'b',
          cases(6, () => tally(1, 2)),
        ),
      ],
      false,
    ).tests;
    expect(test).toMatchObject({ conclusion: 'difference', significant: true, pValue: 2 / 64, smallestPossiblePValue: 2 / 64 });
    expect(test.verdict).toMatch(
      /^command\/none \(a\) passes more often than command\/none \(b\) \(p = 0\.0313 < 0\.05 by the exact sign-flip permutation test over cases/,
    );
    // Every case the same gap: every resample has it too.
    expect(test.difference).toMatchObject({
      estimate: expect.closeTo(-2 / 3, 12),
      interval: { low: expect.closeTo(-2 / 3, 12), high: expect.closeTo(-2 / 3, 12) },
    });
  });

  it('says "no significant difference" with enough differing cases and a p above 0.05', () => {
    const a = side(
      'a',
      cases(8, (index) => (index < 5 ? tally(2, 0) : tally(0, 2))),
    );
    const b = side(
      'b',
      cases(8, (index) => (index < 5 ? tally(1, 1) : tally(1, 1))),
    );
    const [test] = compareSides([a, b], false).tests;
    expect(test).toMatchObject({ conclusion: 'no-significant-difference', significant: false, differingCases: 8 });
    expect(test.pValue!).toBeGreaterThanOrEqual(0.05);
    expect(test.verdict).toMatch(/^No significant difference between .* \(p = [0-9.]+ ≥ 0\.05 by the exact sign-flip/);
  });

  it('tells too few differing cases apart from too few cases, and no difference at all', () => {
    const same = cases(10, () => tally(2, 1));
    const fewDiffer = { ...same, 'case-1': tally(0, 3), 'case-2': tally(0, 3) };
    const [few] = compareSides([side('a', same), side('b', fewDiffer)], false).tests;
    expect(few).toMatchObject({ conclusion: 'too-few-cases', comparedCases: 10, differingCases: 2, smallestPossiblePValue: 0.5 });
    expect(few.verdict).toMatch(
      /^Not enough cases differ to tell: 2 of the 10 cases differ, and with 2 the smallest possible p is 0\.5; at least 6 must differ\./,
    );
    const [none] = compareSides([side('a', same), side('b', same)], false).tests;
    expect(none).toMatchObject({ conclusion: 'no-difference', significant: false, pValue: 1 });
    expect(none.verdict).toBe('No difference between command/none (a) and command/none (b): each of the 10 cases has the same pass rate on both.');
  });

  it('has nothing to compare when the baseline, or the other side, scored nothing', () => {
    const voided = side(
      'voided',
      cases(6, () => tally(0, 0, 3)),
    );
    const scored = side(
      'scored',
      cases(6, () => tally(2, 1)),
    );
    const [baselineEmpty] = compareSides([voided, scored], false).tests;
    expect(baselineEmpty).toMatchObject({ conclusion: 'nothing-to-compare', pValue: null, difference: null, significant: false, comparedCases: 0 });
    expect(baselineEmpty.verdict).toBe('Nothing to compare: the baseline command/none (voided) has no scored trial (every trial was void, or none ran).');
    const [otherEmpty] = compareSides([scored, voided], false).tests;
    expect(otherEmpty.verdict).toBe('Nothing to compare: command/none (voided) has no scored trial (every trial was void, or none ran).');
    const [disjoint] = compareSides([side('a', { x: tally(1, 0) }), side('b', { y: tally(1, 0) })], false).tests;
    expect(disjoint.verdict).toBe('Nothing to compare: no case has scored trials on every side.');
  });
});

describe('the difference in pass rate, by bootstrap over cases', () => {
  const outcome = (a: [number, number], b: [number, number]) => ({ a: { passed: a[0], scored: a[1] }, b: { passed: b[0], scored: b[1] } });

  it('pools every trial for the estimate, resamples cases for the interval, and answers the same every time', () => {
    const outcomes = [outcome([9, 10], [2, 10]), outcome([5, 10], [5, 10]), outcome([1, 2], [2, 2]), outcome([20, 20], [10, 20])];
    const difference = passRateDifference(outcomes)!;
    expect(difference.estimate).toBeCloseTo(19 / 42 - 35 / 42, 12);
    expect(difference.method).toBe('percentile bootstrap over cases (10,000 seeded resamples)');
    expect(difference.interval!.low).toBeLessThan(difference.estimate);
    expect(difference.interval!.high).toBeGreaterThan(difference.estimate);
    // No resample is further than the most extreme single case, nor closer than the least.
    expect(difference.interval!.low).toBeGreaterThanOrEqual(-0.7 - 1e-12);
    expect(difference.interval!.high).toBeLessThanOrEqual(0.5 + 1e-12);
    expect(passRateDifference(outcomes)).toEqual(difference);
  });

  it('gives no interval from one case, and nothing without a case scored on both sides', () => {
    expect(passRateDifference([outcome([3, 3], [1, 3])])).toMatchObject({ estimate: expect.closeTo(-2 / 3, 12), interval: null });
    expect(passRateDifference([outcome([0, 0], [1, 3])])).toBeNull();
    expect(passRateDifference([])).toBeNull();
  });
});
