/**
 * A paired test of two variants over the same cases: is the difference in their pass rates real?
 * The sign-flip permutation test on the per-case differences of pass rate: under "no difference"
 * each case's difference is as likely negative as positive, so the p-value is the share of the
 * 2^m sign assignments whose total is at least as far from 0 as the one observed. With one
 * trial per case the differences are −1, 0 or 1 and this is exactly McNemar's exact test.
 */

export interface PairedOutcome {
  /** Scored and passed trials of the case on each side; cases with no scored trial on a side are left out. */
  a: { passed: number; scored: number };
  b: { passed: number; scored: number };
}

export interface PairedTestResult {
  method: 'exact sign-flip permutation test (McNemar exact with one trial per case)' | 'sign-flip permutation test (20,000 seeded draws)';
  /** Cases where the two pass rates differ: only these carry information. */
  differingCases: number;
  pValue: number;
}

/** The largest DP table (cases × range of sums) computed exactly; beyond it, seeded sampling. */
const EXACT_LIMIT = 20_000_000;
const DRAWS = 20_000;

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

export function pairedPermutationTest(outcomes: readonly PairedOutcome[]): PairedTestResult {
  const judged = outcomes.filter(({ a, b }) => a.scored > 0 && b.scored > 0);
  // Integer differences: both rates scaled by the least common multiple of the trial counts.
  const scale = judged.reduce((lcm, { a, b }) => [a.scored, b.scored].reduce((l, n) => (l * n) / gcd(l, n), lcm), 1);
  const differences = judged
    .map(({ a, b }) => (a.passed * scale) / a.scored - (b.passed * scale) / b.scored)
    .map(Math.round)
    .filter((difference) => difference !== 0)
    .map(Math.abs);
  const observed = Math.abs(judged.reduce((total, { a, b }) => total + Math.round((a.passed * scale) / a.scored - (b.passed * scale) / b.scored), 0));
  const differingCases = differences.length;
  if (differingCases === 0) return { method: 'exact sign-flip permutation test (McNemar exact with one trial per case)', differingCases, pValue: 1 };
  const range = differences.reduce((total, value) => total + value, 0);
  if (Number.isSafeInteger(scale) && differingCases * (2 * range + 1) <= EXACT_LIMIT) {
    return {
      method: 'exact sign-flip permutation test (McNemar exact with one trial per case)',
      differingCases,
      pValue: exactPValue(differences, range, observed),
    };
  }
  return { method: 'sign-flip permutation test (20,000 seeded draws)', differingCases, pValue: sampledPValue(differences, observed) };
}

/** The distribution of Σ ±d_i by dynamic programming over the sums, in probabilities. */
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
    if (Math.abs(total) >= observed) extreme += 1;
  }
  // The observed assignment counts as one of the draws: p is never 0.
  return (extreme + 1) / (DRAWS + 1);
}
