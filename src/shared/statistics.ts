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

/** C(n, k) as a float, built as a running product so it never overflows for eval-sized n. */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let result = 1;
  for (let i = 1; i <= Math.min(k, n - k); i += 1) result = (result * (n - Math.min(k, n - k) + i)) / i;
  return result;
}

/**
 * The unbiased estimator of pass@k for one case (Chen et al., 2021): the chance that at least one
 * of k trials drawn without replacement from its n scored trials, c of them passed, passes:
 * 1 − C(n−c, k) / C(n, k). Null when k exceeds the trials there are.
 */
export function unbiasedPassAtK(n: number, c: number, k: number): number | null {
  if (k < 1 || k > n) return null;
  if (n - c < k) return 1;
  return 1 - choose(n - c, k) / choose(n, k);
}

/** pass^k for one case: the chance that all k trials drawn pass, C(c, k) / C(n, k); null when k > n. */
export function passHatK(n: number, c: number, k: number): number | null {
  if (k < 1 || k > n) return null;
  return choose(c, k) / choose(n, k);
}

/** An estimator averaged over the cases with at least k scored trials; null when none has. */
export function averagedOverCases(cases: readonly CaseTally[], k: number, estimator: (n: number, c: number, k: number) => number | null): number | null {
  const values = cases.map((tally) => estimator(tally.scored, tally.passed, k)).filter((value): value is number => value !== null);
  return values.length === 0 ? null : values.reduce((total, value) => total + value, 0) / values.length;
}
