/** The statistics of the summary: pure functions of counts, tested with known values. */

/** z for a two-sided 95% interval. */
const Z95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/**
 * The Wilson score interval of a pass rate: unlike the normal approximation it stays inside
 * [0, 1] and says something useful at 0 or n passes out of a handful, which is what eval runs
 * have. Null when nothing was scored: no score is not a score of 0.
 */
export function wilsonInterval(passed: number, scored: number, z = Z95): Interval | null {
  if (scored <= 0) return null;
  const rate = passed / scored;
  const z2 = z * z;
  const denominator = 1 + z2 / scored;
  const centre = (rate + z2 / (2 * scored)) / denominator;
  const half = (z * Math.sqrt((rate * (1 - rate)) / scored + z2 / (4 * scored * scored))) / denominator;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** What pass@k needs of one case on one variant: its k trials' verdicts. */
export interface CaseTally {
  passed: number;
  scored: number;
}

/**
 * pass@k with k the trials of each run: the share of cases where at least one of their trials
 * passed. A case none of whose trials was scored (all void) says nothing and is left out; null
 * when no case is left.
 */
export function passAtK(cases: CaseTally[]): number | null {
  const judged = cases.filter((tally) => tally.scored > 0);
  if (judged.length === 0) return null;
  return judged.filter((tally) => tally.passed > 0).length / judged.length;
}

/** The median of the values that are numbers; null when there is none. */
export function median(values: Array<number | null>): number | null {
  const numbers = values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value)).sort((a, b) => a - b);
  if (numbers.length === 0) return null;
  const middle = Math.floor(numbers.length / 2);
  return numbers.length % 2 === 1 ? numbers[middle] : (numbers[middle - 1] + numbers[middle]) / 2;
}

/**
 * The unbiased estimators for one case of n scored trials, c of them passed, for k = 1 to maxK
 * (at most n): pass@k = 1 − C(n−c, k)/C(n, k), the chance that at least one of k trials drawn
 * without replacement passes (Chen et al., 2021), and pass^k = C(c, k)/C(n, k), the chance that
 * all k pass. Each ratio of binomials is a running product, which neither overflows nor loses
 * precision for large n, and gives every k in one pass.
 */
export function estimatorsUpTo(n: number, c: number, maxK: number): Array<{ passAtK: number; passHatK: number }> {
  const values: Array<{ passAtK: number; passHatK: number }> = [];
  let noneSucceed = 1;
  let allSucceed = 1;
  for (let k = 1; k <= Math.min(maxK, n); k += 1) {
    noneSucceed *= Math.max(0, n - c - (k - 1)) / (n - (k - 1));
    allSucceed *= Math.max(0, c - (k - 1)) / (n - (k - 1));
    values.push({ passAtK: 1 - noneSucceed, passHatK: allSucceed });
  }
  return values;
}

/** pass@k of one case (see estimatorsUpTo); null when k exceeds its n trials. */
export function unbiasedPassAtK(n: number, c: number, k: number): number | null {
  return k < 1 || k > n ? null : estimatorsUpTo(n, c, k)[k - 1].passAtK;
}

/** pass^k of one case (see estimatorsUpTo); null when k exceeds its n trials. */
export function passHatK(n: number, c: number, k: number): number | null {
  return k < 1 || k > n ? null : estimatorsUpTo(n, c, k)[k - 1].passHatK;
}
