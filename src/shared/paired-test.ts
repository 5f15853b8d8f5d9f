/**
 * A paired test of two variants over the same cases: is the difference in their pass rates real?
 * The sign-flip permutation test over cases: under "no difference" each case's difference is as
 * likely negative as positive, so the p-value is the share of the 2^m sign assignments whose
 * total is at least as far from 0 as the one observed. Each case's difference of pass rate is
 * weighted by its trials, n_a·n_b / (n_a + n_b) (the Cochran–Mantel–Haenszel weight, which makes
 * the total Σ (x_a·n_b − x_b·n_a) / (n_a + n_b)): a case run 20 times counts more than one run
 * twice. With one trial per case this is exactly McNemar's exact test.
 *
 * The test is on cases, so the cases bound it: with m differing cases the smallest p it can give
 * is 2 / 2^m (every difference the same way), whatever the trials say.
 */

export interface PairedOutcome {
  /** Scored and passed trials of the case on each side; cases with no scored trial on a side are left out. */
  a: { passed: number; scored: number };
  b: { passed: number; scored: number };
}

export const EXACT_METHOD = 'exact sign-flip permutation test over cases, each weighted by its trials (McNemar exact with one trial per case)';
export const SAMPLED_METHOD = 'sign-flip permutation test over cases, each weighted by its trials (20,000 seeded draws)';

export interface PairedTestResult {
  method: typeof EXACT_METHOD | typeof SAMPLED_METHOD;
  /** Cases where the two pass rates differ: only these carry information. */
  differingCases: number;
  pValue: number;
  /** The weighted total Σ n_a·n_b / (n_a + n_b) · (rate_a − rate_b): above 0 when a passes more often. */
  total: number;
}

/** The largest DP table (cases × range of sums) computed exactly; beyond it, enumeration or seeded sampling. */
const EXACT_LIMIT = 20_000_000;
/** Up to 2^20 sign assignments are enumerated when the weights have no small common scale. */
const ENUMERATED_CASES = 20;
const DRAWS = 20_000;
/** Two totals closer than this are equal: the weights are fractions, summed in floating point. */
const TOLERANCE = 1e-9;

/** The smallest p-value the test can give with `cases` differing cases: both all-same-sign assignments. */
export function smallestPossiblePValue(cases: number): number {
  return Math.min(1, 2 / 2 ** cases);
}

/** The fewest differing cases whose smallest possible p-value is below `alpha`. */
export function casesNeeded(alpha: number): number {
  let cases = 1;
  while (smallestPossiblePValue(cases) >= alpha) cases += 1;
  return cases;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

export function pairedPermutationTest(outcomes: readonly PairedOutcome[]): PairedTestResult {
  const weighted = outcomes
    .filter(({ a, b }) => a.scored > 0 && b.scored > 0)
    .map(({ a, b }) => ({ numerator: a.passed * b.scored - b.passed * a.scored, denominator: a.scored + b.scored }))
    .filter(({ numerator }) => numerator !== 0);
  const differingCases = weighted.length;
  const total = weighted.reduce((sum, { numerator, denominator }) => sum + numerator / denominator, 0);
  if (differingCases === 0) return { method: EXACT_METHOD, differingCases, pValue: 1, total };
  // Integer totals: every weighted difference scaled by the least common multiple of the denominators.
  const scale = weighted.reduce((lcm, { denominator }) => (lcm * denominator) / gcd(lcm, denominator), 1);
  const scaled = weighted.map(({ numerator, denominator }) => (numerator * scale) / denominator);
  const range = scaled.reduce((total, value) => total + Math.abs(value), 0);
  if (Number.isSafeInteger(scale) && Number.isSafeInteger(range) && differingCases * (2 * range + 1) <= EXACT_LIMIT) {
    const observed = Math.abs(scaled.reduce((total, value) => total + value, 0));
    return { method: EXACT_METHOD, differingCases, pValue: exactPValue(scaled.map(Math.abs), range, observed), total };
  }
  const magnitudes = weighted.map(({ numerator, denominator }) => Math.abs(numerator / denominator));
  const observed = Math.abs(total);
  if (differingCases <= ENUMERATED_CASES) return { method: EXACT_METHOD, differingCases, pValue: enumeratedPValue(magnitudes, observed), total };
  return { method: SAMPLED_METHOD, differingCases, pValue: sampledPValue(magnitudes, observed), total };
}

/** The distribution of Σ ±d_i by dynamic programming over the integer sums, in probabilities. */
function exactPValue(differences: readonly number[], range: number, observed: number): number {
  let distribution = new Float64Array(2 * range + 1);
  distribution[range] = 1;
  for (const value of differences) {
    const next = new Float64Array(2 * range + 1);
    for (let sum = 0; sum < distribution.length; sum += 1) {
      const weight = distribution[sum];
      if (weight === 0) continue;
      if (sum - value >= 0) next[sum - value] += weight / 2;
      if (sum + value < next.length) next[sum + value] += weight / 2;
    }
    distribution = next;
  }
  let p = 0;
  for (let sum = 0; sum < distribution.length; sum += 1) if (Math.abs(sum - range) >= observed) p += distribution[sum];
  return Math.min(1, p);
}

/** Every sign assignment, counted: exact for fractional weights, for up to ENUMERATED_CASES cases. */
function enumeratedPValue(differences: readonly number[], observed: number): number {
  const assignments = 2 ** differences.length;
  let extreme = 0;
  for (let signs = 0; signs < assignments; signs += 1) {
    let total = 0;
    for (let index = 0; index < differences.length; index += 1) total += signs & (1 << index) ? differences[index] : -differences[index];
    if (Math.abs(total) >= observed - TOLERANCE) extreme += 1;
  }
  return extreme / assignments;
}

/** A Monte Carlo estimate with a fixed seed, so the same history always answers the same p-value. */
function sampledPValue(differences: readonly number[], observed: number): number {
  let state = 0x9e3779b9;
  const random = () => {
    // xorshift32: deterministic, good enough to draw signs.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
  let extreme = 0;
  for (let draw = 0; draw < DRAWS; draw += 1) {
    let total = 0;
    for (const value of differences) total += random() < 0.5 ? value : -value;
    if (Math.abs(total) >= observed - TOLERANCE) extreme += 1;
  }
  // The observed assignment counts as one of the draws: p is never 0.
  return (extreme + 1) / (DRAWS + 1);
}
