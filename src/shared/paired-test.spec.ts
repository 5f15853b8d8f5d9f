import { casesNeeded, EXACT_METHOD, pairedPermutationTest, SAMPLED_METHOD, smallestPossiblePValue } from './paired-test';

const tally = (passed: number, scored: number) => ({ passed, scored });

/** Every sign assignment of the weighted differences, counted by brute force: the definition of the test. */
function bruteForceP(outcomes: Array<{ a: { passed: number; scored: number }; b: { passed: number; scored: number } }>): number {
  const weighted = outcomes.map(({ a, b }) => (a.passed * b.scored - b.passed * a.scored) / (a.scored + b.scored)).filter((value) => value !== 0);
  const observed = Math.abs(weighted.reduce((sum, value) => sum + value, 0));
  let extreme = 0;
  for (let signs = 0; signs < 2 ** weighted.length; signs += 1) {
    const total = weighted.reduce((sum, value, index) => sum + (signs & (1 << index) ? value : -value), 0);
    if (Math.abs(total) >= observed - 1e-9) extreme += 1;
  }
  return extreme / 2 ** weighted.length;
}

describe('the sign-flip test over cases, each weighted by its trials', () => {
  it('cannot go below 2 / 2^m with m cases: 0.25 with 3, and needs 6 for p < 0.05', () => {
    expect(smallestPossiblePValue(3)).toBe(0.25);
    expect(smallestPossiblePValue(5)).toBe(0.0625);
    expect(smallestPossiblePValue(6)).toBe(0.03125);
    expect(smallestPossiblePValue(0)).toBe(1);
    expect(casesNeeded(0.05)).toBe(6);
    expect(casesNeeded(0.01)).toBe(8);
    // 9 of 9 against 2 of 9 over 3 cases: as far apart as 3 cases can be, and still p = 0.25.
    const threeCases = [tally(3, 3), tally(3, 3), tally(3, 3)].map((a, index) => ({ a, b: tally([1, 1, 0][index], 3) }));
    expect(pairedPermutationTest(threeCases)).toMatchObject({ differingCases: 3, pValue: 0.25, method: EXACT_METHOD });
  });

  it('weighs a case by its trials: a large case outweighs a small one the other way', () => {
    // Case 1: 20 trials each, 20 against 0 (weight 10, difference 1); case 2: 2 trials each, 0 against 2 (weight 1, difference −1).
    const outcomes = [
      { a: tally(20, 20), b: tally(0, 20) },
      { a: tally(0, 2), b: tally(2, 2) },
    ];
    const result = pairedPermutationTest(outcomes);
    // Unweighted, +1 and −1 cancel out; weighted, the 20-trial case leads: 10 − 1. Two cases can show nothing: p = 1.
    expect(result.total).toBeCloseTo(9, 12);
    expect(result.pValue).toBe(1);
    expect(result.pValue).toBeCloseTo(bruteForceP(outcomes), 12);
  });

  it('agrees with brute force on uneven trial counts (exact by integers, and by enumeration)', () => {
    const outcomes = [
      { a: tally(7, 7), b: tally(2, 9) },
      { a: tally(3, 4), b: tally(1, 5) },
      { a: tally(10, 11), b: tally(4, 13) },
      { a: tally(2, 3), b: tally(3, 3) },
      { a: tally(5, 6), b: tally(0, 6) },
      { a: tally(8, 8), b: tally(1, 7) },
      { a: tally(4, 4), b: tally(4, 4) },
    ];
    const result = pairedPermutationTest(outcomes);
    expect(result).toMatchObject({ method: EXACT_METHOD, differingCases: 6 });
    expect(result.pValue).toBeCloseTo(bruteForceP(outcomes), 12);
    // Counts whose denominators have no small common multiple are enumerated: the same definition.
    const primes = [101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157];
    const awkward = primes.map((n, index) => ({ a: tally(n - (index % 3), n), b: tally(Math.floor(n / 2), n + 1) }));
    const enumerated = pairedPermutationTest(awkward);
    expect(enumerated.method).toBe(EXACT_METHOD);
    expect(enumerated.pValue).toBeCloseTo(bruteForceP(awkward), 12);
    expect(enumerated.pValue).toBeCloseTo(2 / 2 ** 12, 12);
  });

  it('samples, seeded, past 20 differing cases whose weights have no small common scale', () => {
    const many = Array.from({ length: 24 }, (_, index) => ({ a: tally(90 + index, 97 + index * 2), b: tally(40, 101 + index * 2) }));
    const first = pairedPermutationTest(many);
    expect(first.method).toBe(SAMPLED_METHOD);
    expect(first.pValue).toBeCloseTo(1 / 20_001, 12);
    expect(pairedPermutationTest(many)).toEqual(first);
  });
});
