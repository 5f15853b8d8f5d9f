import type { PairedOutcome } from '#shared/paired-test';

export const BOOTSTRAP_METHOD = 'percentile bootstrap over cases (10,000 seeded resamples)';

export interface PassRateDifference {
  /** The other side's pass rate minus the baseline's, each over every scored trial of the compared cases. */
  estimate: number;
  /** Its 95% interval; null with fewer than two cases, which cannot be resampled. */
  interval: { low: number; high: number } | null;
  method: typeof BOOTSTRAP_METHOD;
}

const RESAMPLES = 10_000;
const LEVEL = 0.95;

/** b's pooled pass rate minus a's over the cases drawn (each index once per draw). */
function pooledDifference(outcomes: readonly PairedOutcome[], drawn: ArrayLike<number>): number {
  let aPassed = 0;
  let aScored = 0;
  let bPassed = 0;
  let bScored = 0;
  for (let index = 0; index < drawn.length; index += 1) {
    const { a, b } = outcomes[drawn[index]];
    aPassed += a.passed;
    aScored += a.scored;
    bPassed += b.passed;
    bScored += b.scored;
  }
  return bPassed / bScored - aPassed / aScored;
}

/**
 * The difference in pass rate between two sides over the same cases, with a 95% interval from
 * resampling the cases (not the trials: the trials of one case are not independent of each other,
 * the cases are the sample). Seeded, so the same history always answers the same interval.
 * Null when no case has a scored trial on both sides.
 */
export function passRateDifference(outcomes: readonly PairedOutcome[]): PassRateDifference | null {
  const judged = outcomes.filter(({ a, b }) => a.scored > 0 && b.scored > 0);
  if (judged.length === 0) return null;
  const estimate = pooledDifference(
    judged,
    judged.map((_, index) => index),
  );
  if (judged.length < 2) return { estimate, interval: null, method: BOOTSTRAP_METHOD };
  let state = 0x2545f491;
  const random = () => {
    // xorshift32: deterministic draws of case indexes.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
  const drawn = new Uint32Array(judged.length);
  const differences = new Float64Array(RESAMPLES);
  for (let resample = 0; resample < RESAMPLES; resample += 1) {
    for (let index = 0; index < drawn.length; index += 1) drawn[index] = Math.floor(random() * judged.length);
    differences[resample] = pooledDifference(judged, drawn);
  }
  differences.sort();
  const at = (share: number) => differences[Math.min(RESAMPLES - 1, Math.max(0, Math.floor(share * RESAMPLES)))];
  const tail = (1 - LEVEL) / 2;
  return { estimate, interval: { low: at(tail), high: at(1 - tail) }, method: BOOTSTRAP_METHOD };
}
