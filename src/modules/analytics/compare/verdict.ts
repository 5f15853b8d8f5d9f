import type { PassRateDifference } from './pass-rate-difference';

/**
 * What a paired test lets one say: a difference beyond chance; none shown; none at all (every
 * case passes as often on both sides); too few (differing) cases for any p below the level; or
 * nothing to compare (a side, or the pair, has no scored trial).
 */
export type Conclusion = 'difference' | 'no-significant-difference' | 'no-difference' | 'too-few-cases' | 'nothing-to-compare';

export interface VerdictFacts {
  baseline: string;
  other: string;
  method: string;
  alpha: number;
  comparedCases: number;
  differingCases: number;
  pValue: number;
  smallestPossiblePValue: number;
  casesNeeded: number;
  /** The test's weighted total of baseline − other: above 0 when the baseline passes more often. */
  total: number;
  difference: PassRateDifference | null;
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
const formatP = (p: number) => (p < 0.0001 ? p.toExponential(1) : Number(p.toFixed(4)).toString());
const points = (value: number) => {
  const rounded = Math.round(value * 100);
  return rounded === 0 ? '0' : `${rounded > 0 ? '+' : '−'}${Math.abs(rounded)}`;
};

/** "other − baseline: +78 points [95% CI +67, +89] over 3 cases" (no interval from one case). */
export function differenceWords(facts: Pick<VerdictFacts, 'baseline' | 'other' | 'difference' | 'comparedCases'>): string {
  const { difference } = facts;
  if (difference === null) return '';
  const interval =
    difference.interval === null ? ' (one case: no interval)' : ` [95% CI ${points(difference.interval.low)}, ${points(difference.interval.high)}]`;
  return `${facts.other} − ${facts.baseline}: ${points(difference.estimate)} points of pass rate${interval} over ${plural(facts.comparedCases, 'case')}`;
}

/** The conclusion, and the verdict in words: each says what was measured and by which test. */
export function verdictOf(facts: VerdictFacts): { conclusion: Exclude<Conclusion, 'nothing-to-compare'>; significant: boolean; verdict: string } {
  const { baseline, other, alpha, comparedCases, differingCases, casesNeeded } = facts;
  const measured = differenceWords(facts);
  const smallest = formatP(facts.smallestPossiblePValue);
  if (comparedCases < casesNeeded) {
    return {
      conclusion: 'too-few-cases',
      significant: false,
      verdict: `Not enough cases to tell: with ${plural(comparedCases, 'case')} the smallest possible p is ${smallest}; at least ${casesNeeded} are needed. ${measured}.`,
    };
  }
  if (differingCases === 0) {
    return {
      conclusion: 'no-difference',
      significant: false,
      verdict: `No difference between ${baseline} and ${other}: each of the ${comparedCases} cases has the same pass rate on both.`,
    };
  }
  if (differingCases < casesNeeded) {
    return {
      conclusion: 'too-few-cases',
      significant: false,
      verdict:
        `Not enough cases differ to tell: ${differingCases} of the ${comparedCases} cases differ, and with ${differingCases} the smallest possible p is ${smallest}; ` +
        `at least ${casesNeeded} must differ. ${measured}.`,
    };
  }
  const p = `p = ${formatP(facts.pValue)}`;
  const test = facts.method.replace(/ \(.*\)$/, '');
  if (facts.pValue < alpha) {
    const better = facts.total < 0 ? other : baseline;
    const worse = better === other ? baseline : other;
    return {
      conclusion: 'difference',
      significant: true,
      verdict: `${better} passes more often than ${worse} (${p} < ${alpha} by the ${test}): the difference is unlikely to be chance. ${measured}.`,
    };
  }
  return {
    conclusion: 'no-significant-difference',
    significant: false,
    verdict: `No significant difference between ${baseline} and ${other} (${p} ≥ ${alpha} by the ${test}): it may be chance; more cases would tell. ${measured}.`,
  };
}

/** Why a pair has nothing to compare: the baseline, the other side, or no case scored on every side. */
export function nothingToCompare(baseline: { label: string; scored: number }, other: { label: string; scored: number }): string {
  if (baseline.scored === 0) return `Nothing to compare: the baseline ${baseline.label} has no scored trial (every trial was void, or none ran).`;
  if (other.scored === 0) return `Nothing to compare: ${other.label} has no scored trial (every trial was void, or none ran).`;
  return `Nothing to compare: no case has scored trials on every side.`;
}
