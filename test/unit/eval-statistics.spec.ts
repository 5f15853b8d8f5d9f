import { median, passAtK, wilsonInterval } from '#shared/statistics';

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
