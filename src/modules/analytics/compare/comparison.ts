import { casesNeeded, pairedPermutationTest, smallestPossiblePValue } from '#shared/paired-test';
import { estimatorsUpTo } from '#shared/statistics';
import { mergeTallies, Tally } from '../tally';
import { tallyView, TallyView } from '../tally-view';
import { variantLabel, VariantSummary } from '../variant-key';
import { PassRateDifference, passRateDifference } from './pass-rate-difference';
import { Conclusion, nothingToCompare, verdictOf } from './verdict';

/** One side of a comparison: a variant definition (in one batch, or across a suite's history), case by case. */
export interface ComparedSide {
  batchId: string | null;
  variantKey: string;
  variant: VariantSummary;
  cases: Map<string, { caseName: string; tally: Tally }>;
}

export interface SideView extends TallyView {
  label: string;
  batchId: string | null;
  variantKey: string;
  variant: VariantSummary;
  /** k = 1 to the fewest scored trials of a compared case (at most 100): the unbiased estimators, averaged over the cases. */
  atK: Array<{ k: number; passAtK: number; passHatK: number }>;
}

export interface PairedTest {
  baseline: string;
  other: string;
  /** The test used, by name. */
  method: string;
  /** The cases the test is over: those every side scored. */
  comparedCases: number;
  differingCases: number;
  /** Null when there is nothing to compare. */
  pValue: number | null;
  /** 2 / 2^m for m differing cases: a test on cases can go no lower, whatever the trials say. */
  smallestPossiblePValue: number;
  /** The fewest differing cases whose smallest possible p is below 0.05. */
  casesNeeded: number;
  significant: boolean;
  conclusion: Conclusion;
  /** The other side's pass rate minus the baseline's, with its 95% interval by bootstrap over cases; null when nothing to compare. */
  difference: PassRateDifference | null;
  verdict: string;
}

export interface Comparison {
  sides: SideView[];
  /** Cases every side has a scored trial of: the statistics are over these alone. */
  comparedCases: number;
  /** Cases some side has no scored trial of, left out. */
  unpairedCases: string[];
  differingCases: Array<{ caseId: string; caseName: string; sides: Array<{ label: string; passed: number; scored: number; passRate: number }> }>;
  /** Each side against the first, at the 0.05 level. */
  tests: PairedTest[];
}

const ALPHA = 0.05;
const MAX_DIFFERING_LISTED = 200;
/** The largest k listed: a suite's long history holds hundreds of trials per case, a batch at most 100. */
const MAX_K = 100;
const scoredOf = (tally: Tally) => tally.passed + tally.failed;

/** A compared case's tally on a side: every side holds every compared case. */
function tallyOf(side: ComparedSide, caseId: string): Tally {
  const held = side.cases.get(caseId);
  if (held === undefined) throw new Error(`A compared side lacks the case "${caseId}".`);
  return held.tally;
}

export function compareSides(sides: readonly ComparedSide[], labelWithBatch: boolean): Comparison {
  const allCases = [...new Set(sides.flatMap((side) => [...side.cases.keys()]))].sort();
  const common = allCases.filter((caseId) => sides.every((side) => scoredOf(side.cases.get(caseId)?.tally ?? mergeTallies([])) > 0));
  const labels = sides.map((side) => (labelWithBatch && side.batchId !== null ? `${side.batchId} ${variantLabel(side.variant)}` : variantLabel(side.variant)));
  const views = sides.map((side, index) => sideView(side, labels[index], common));
  return {
    sides: views,
    comparedCases: common.length,
    unpairedCases: allCases.filter((caseId) => !common.includes(caseId)),
    differingCases: differing(sides, labels, common),
    tests: sides.slice(1).map((side, index) => pairedTest(sides[0], side, labels[0], labels[index + 1], common)),
  };
}

function sideView(side: ComparedSide, label: string, common: readonly string[]): SideView {
  const tallies = common.map((caseId) => tallyOf(side, caseId));
  const perCase = tallies.map((tally) => ({ passed: tally.passed, scored: scoredOf(tally) }));
  const maxK = perCase.length === 0 ? 0 : Math.min(MAX_K, ...perCase.map((tally) => tally.scored));
  const curves = perCase.map((tally) => estimatorsUpTo(tally.scored, tally.passed, maxK));
  const mean = (values: number[]) => values.reduce((total, value) => total + value, 0) / values.length;
  const atK = Array.from({ length: maxK }, (_, index) => ({
    k: index + 1,
    passAtK: mean(curves.map((curve) => curve[index].passAtK)),
    passHatK: mean(curves.map((curve) => curve[index].passHatK)),
  }));
  return { label, batchId: side.batchId, variantKey: side.variantKey, variant: side.variant, ...tallyView(mergeTallies(tallies)), atK };
}

function differing(sides: readonly ComparedSide[], labels: readonly string[], common: readonly string[]): Comparison['differingCases'] {
  const rows = common.map((caseId) => {
    const per = sides.map((side, index) => {
      const tally = tallyOf(side, caseId);
      return { label: labels[index], passed: tally.passed, scored: scoredOf(tally), passRate: tally.passed / scoredOf(tally) };
    });
    const rates = per.map((entry) => entry.passRate);
    return { caseId, caseName: sides[0].cases.get(caseId)?.caseName ?? caseId, sides: per, spread: Math.max(...rates) - Math.min(...rates) };
  });
  return rows
    .filter((row) => row.spread > 0)
    .sort((a, b) => b.spread - a.spread || a.caseId.localeCompare(b.caseId))
    .slice(0, MAX_DIFFERING_LISTED)
    .map(({ spread: _spread, ...row }) => row);
}

const scoredIn = (side: ComparedSide) => [...side.cases.values()].reduce((total, { tally }) => total + scoredOf(tally), 0);

function pairedTest(baseline: ComparedSide, other: ComparedSide, baselineLabel: string, otherLabel: string, common: readonly string[]): PairedTest {
  const outcomes = common.map((caseId) => {
    const a = tallyOf(baseline, caseId);
    const b = tallyOf(other, caseId);
    return { a: { passed: a.passed, scored: scoredOf(a) }, b: { passed: b.passed, scored: scoredOf(b) } };
  });
  const result = pairedPermutationTest(outcomes);
  const needed = casesNeeded(ALPHA);
  const base = {
    baseline: baselineLabel,
    other: otherLabel,
    method: result.method,
    comparedCases: common.length,
    differingCases: result.differingCases,
    smallestPossiblePValue: smallestPossiblePValue(common.length < needed ? common.length : result.differingCases),
    casesNeeded: needed,
  };
  if (common.length === 0) {
    const verdict = nothingToCompare({ label: baselineLabel, scored: scoredIn(baseline) }, { label: otherLabel, scored: scoredIn(other) });
    return { ...base, pValue: null, significant: false, conclusion: 'nothing-to-compare', difference: null, verdict };
  }
  const difference = passRateDifference(outcomes);
  const reading = verdictOf({ ...base, alpha: ALPHA, pValue: result.pValue, total: result.total, difference });
  return { ...base, pValue: result.pValue, difference, ...reading };
}
