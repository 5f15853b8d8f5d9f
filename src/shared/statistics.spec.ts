import { pairedPermutationTest } from './paired-test';
import { estimatorsUpTo, median, passAtK, passHatK, unbiasedPassAtK, wilsonInterval } from './statistics';

describe('the Wilson 95% interval', () => {
  const rounded = (interval: { low: number; high: number } | null) => interval && { low: +interval.low.toFixed(4), high: +interval.high.toFixed(4) };

  it('matches published values', () => {
    // Wilson (1927), as tabulated by Newcombe (1998), example (i): 81 of 263 -> 0.2553 to 0.3662.
    expect(rounded(wilsonInterval(81, 263))).toEqual({ low: 0.2553, high: 0.3662 });
    // Newcombe's example (ii): 15 of 148 -> 0.0624 to 0.1605.
    expect(rounded(wilsonInterval(15, 148))).toEqual({ low: 0.0624, high: 0.1605 });
  });

  it('stays inside [0, 1] and is not a point at 0 or n of n', () => {
    // Newcombe's example (iv): 0 of 20 -> 0 to 0.1611; and by symmetry 20 of 20 -> 0.8389 to 1.
    expect(rounded(wilsonInterval(0, 20))).toEqual({ low: 0, high: 0.1611 });
    expect(rounded(wilsonInterval(20, 20))).toEqual({ low: 0.8389, high: 1 });
    expect(rounded(wilsonInterval(1, 1))).toEqual({ low: 0.2065, high: 1 });
  });

  it('is null when nothing was scored', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe('pass@k', () => {
  it('is the share of cases with at least one passing trial', () => {
    expect(
      passAtK([
        { passed: 0, scored: 3 },
        { passed: 1, scored: 3 },
        { passed: 3, scored: 3 },
        { passed: 0, scored: 2 },
      ]),
    ).toBe(0.5);
  });

  it('leaves out cases with no scored trial, and is null when none is left', () => {
    expect(
      passAtK([
        { passed: 0, scored: 0 },
        { passed: 2, scored: 2 },
      ]),
    ).toBe(1);
    expect(passAtK([{ passed: 0, scored: 0 }])).toBeNull();
    expect(passAtK([])).toBeNull();
  });
});

describe('median', () => {
  it('takes the middle value, or the mean of the two middle ones, ignoring nulls', () => {
    expect(median([3, null, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([null])).toBeNull();
  });
});

describe('the unbiased pass@k and pass^k', () => {
  const choose = (n: number, k: number): number => (k < 0 || k > n ? 0 : k === 0 ? 1 : (choose(n - 1, k - 1) * n) / k);

  it('match 1 − C(n−c, k)/C(n, k) and C(c, k)/C(n, k)', () => {
    for (const [n, c] of [
      [4, 2],
      [5, 1],
      [10, 7],
      [3, 0],
      [3, 3],
    ]) {
      const curve = estimatorsUpTo(n, c, n);
      expect(curve).toHaveLength(n);
      curve.forEach(({ passAtK, passHatK }, index) => {
        const k = index + 1;
        expect(passAtK).toBeCloseTo(1 - choose(n - c, k) / choose(n, k), 12);
        expect(passHatK).toBeCloseTo(choose(c, k) / choose(n, k), 12);
      });
    }
    expect(unbiasedPassAtK(4, 2, 2)).toBeCloseTo(5 / 6, 12);
    expect(passHatK(4, 2, 2)).toBeCloseTo(1 / 6, 12);
  });

  it('stays finite for long histories, and is null past n', () => {
    const [last] = estimatorsUpTo(500, 250, 500).slice(-1);
    expect(last).toEqual({ passAtK: 1, passHatK: 0 });
    expect(estimatorsUpTo(500, 250, 2)[1].passAtK).toBeCloseTo(1 - (250 * 249) / (500 * 499), 12);
    expect(unbiasedPassAtK(3, 1, 4)).toBeNull();
  });
});

describe('the paired permutation test', () => {
  const single = (a: boolean, b: boolean) => ({ a: { passed: a ? 1 : 0, scored: 1 }, b: { passed: b ? 1 : 0, scored: 1 } });

  it("is McNemar's exact test with one trial per case", () => {
    // 6 discordant pairs all one way: 2 × (1/2)^6; 5 against 1: 2 × (1 + 6) / 64.
    expect(pairedPermutationTest([...Array(6)].map(() => single(true, false))).pValue).toBeCloseTo(2 / 64, 12);
    expect(pairedPermutationTest([...[...Array(5)].map(() => single(true, false)), single(false, true), single(true, true)]).pValue).toBeCloseTo(14 / 64, 12);
    expect(pairedPermutationTest([single(true, true), single(false, false)])).toMatchObject({ differingCases: 0, pValue: 1 });
  });

  it('weighs differences of pass rates with several trials per case', () => {
    // Differences 0.5 and 0.25 (scaled to 2 and 1): |±2 ±1| reaches 3 for two of the four sign choices.
    const outcomes = [
      { a: { passed: 4, scored: 4 }, b: { passed: 2, scored: 4 } },
      { a: { passed: 3, scored: 4 }, b: { passed: 2, scored: 4 } },
    ];
    expect(pairedPermutationTest(outcomes).pValue).toBeCloseTo(2 / 4, 12);
  });
});
