import { median } from '#shared/statistics';
import type { CostRecord } from '../evals/trials/costs';

/**
 * What analytics keeps of a set of trials: verdicts, costs, and the command counts and model
 * times as histograms (value → trials), so medians stay exact and documents stay small however
 * many trials they hold. `pairs` and `disagreeingPairs` count, within each run, the pairs of
 * scored trials and those whose verdicts differ: their ratio is how often two trials of the same
 * definition disagree, what flakiness is.
 */
export type Tally = {
  verdicts: number;
  passed: number;
  failed: number;
  voided: number;
  knownActualUsd: number;
  allocatedUsd: number;
  estimatedEquivalentUsd: number;
  costIncomplete: boolean;
  commandCounts: Record<string, number>;
  modelMsCounts: Record<string, number>;
  runs: number;
  mixedRuns: number;
  pairs: number;
  disagreeingPairs: number;
};

export const emptyTally = (): Tally => ({
  verdicts: 0,
  passed: 0,
  failed: 0,
  voided: 0,
  knownActualUsd: 0,
  allocatedUsd: 0,
  estimatedEquivalentUsd: 0,
  costIncomplete: false,
  commandCounts: {},
  modelMsCounts: {},
  runs: 0,
  mixedRuns: 0,
  pairs: 0,
  disagreeingPairs: 0,
});

/** A verdict as the projection saw it, with what the trial's run held before and after it. */
export interface VerdictDelta {
  status: 'passed' | 'failed' | 'void';
  commands: number;
  modelMs: number;
  costs: CostRecord;
  run: { before: RunCounts; after: RunCounts };
}

/** A run's verdicts so far: how many trials have one, and how many of them passed or failed. */
export interface RunCounts {
  verdicts: number;
  passed: number;
  failed: number;
}

/**
 * Model time kept on a 10 % logarithmic scale (1234 ms counts as 1191): a histogram then holds
 * about 24 keys a decade and a median off by under 5 %, where exact times would make a key a trial.
 */
export function roundedMs(ms: number): number {
  if (!Number.isFinite(ms) || ms < 1) return 0;
  return Math.round(1.1 ** Math.round(Math.log(ms) / Math.log(1.1)));
}

const round = (usd: number) => Math.round(usd * 1e8) / 1e8;
const scoredPairs = (counts: RunCounts) => ((counts.passed + counts.failed) * (counts.passed + counts.failed - 1)) / 2;
const mixed = (counts: RunCounts) => counts.passed > 0 && counts.failed > 0;

/** The tally with one more verdict. */
export function withVerdict(tally: Tally, delta: VerdictDelta): Tally {
  const scored = delta.status !== 'void';
  const { before, after } = delta.run;
  const bump = (counts: Record<string, number>, value: number) =>
    scored ? { ...counts, [value]: Object.hasOwn(counts, value) ? counts[value] + 1 : 1 } : counts;
  return {
    verdicts: tally.verdicts + 1,
    passed: tally.passed + (delta.status === 'passed' ? 1 : 0),
    failed: tally.failed + (delta.status === 'failed' ? 1 : 0),
    voided: tally.voided + (delta.status === 'void' ? 1 : 0),
    knownActualUsd: round(tally.knownActualUsd + delta.costs.knownActualUsd),
    allocatedUsd: round(tally.allocatedUsd + delta.costs.allocatedUsd),
    estimatedEquivalentUsd: round(tally.estimatedEquivalentUsd + delta.costs.estimatedEquivalentUsd),
    costIncomplete: tally.costIncomplete || delta.costs.incomplete,
    commandCounts: bump(tally.commandCounts, delta.commands),
    modelMsCounts: bump(tally.modelMsCounts, roundedMs(delta.modelMs)),
    runs: tally.runs + (before.verdicts === 0 ? 1 : 0),
    mixedRuns: tally.mixedRuns + (mixed(after) && !mixed(before) ? 1 : 0),
    pairs: tally.pairs + scoredPairs(after) - scoredPairs(before),
    disagreeingPairs: tally.disagreeingPairs + after.passed * after.failed - before.passed * before.failed,
  };
}

/** Adds one histogram into another (value → trials). */
function addCounts(total: Record<string, number>, counts: Readonly<Record<string, number>>): void {
  for (const value in counts) total[value] = (Object.hasOwn(total, value) ? total[value] : 0) + counts[value];
}

/** Several tallies as one (buckets of a coarser answer, the cases of a suite). */
export function mergeTallies(tallies: ReadonlyArray<Readonly<Tally>>): Tally {
  const total = emptyTally();
  for (const tally of tallies) {
    total.verdicts += tally.verdicts;
    total.passed += tally.passed;
    total.failed += tally.failed;
    total.voided += tally.voided;
    total.knownActualUsd = round(total.knownActualUsd + tally.knownActualUsd);
    total.allocatedUsd = round(total.allocatedUsd + tally.allocatedUsd);
    total.estimatedEquivalentUsd = round(total.estimatedEquivalentUsd + tally.estimatedEquivalentUsd);
    total.costIncomplete ||= tally.costIncomplete;
    addCounts(total.commandCounts, tally.commandCounts);
    addCounts(total.modelMsCounts, tally.modelMsCounts);
    total.runs += tally.runs;
    total.mixedRuns += tally.mixedRuns;
    total.pairs += tally.pairs;
    total.disagreeingPairs += tally.disagreeingPairs;
  }
  return total;
}

/**
 * The median of a histogram's values (the mean of the two middle ones for an even count). Its
 * keys are integers, which objects list in ascending order, so it walks them where they are,
 * allocating nothing; keys in another order (not integers) are sorted first.
 */
export function histogramMedian(counts: Readonly<Record<string, number>>): number | null {
  let total = 0;
  let previous = Number.NEGATIVE_INFINITY;
  let ascending = true;
  for (const key in counts) {
    const value = Number(key);
    if (value < previous) ascending = false;
    previous = value;
    total += counts[key];
  }
  if (total === 0) return null;
  const at = ascending ? (position: number) => valueAt(counts, position) : sortedValueAt(counts);
  return total % 2 === 1 ? at((total - 1) / 2) : (median([at(total / 2 - 1), at(total / 2)]) ?? null);
}

/** The value of the trial at a position (from 0) in a histogram whose keys ascend. */
function valueAt(counts: Readonly<Record<string, number>>, position: number): number {
  let seen = 0;
  let last = 0;
  for (const key in counts) {
    last = Number(key);
    seen += counts[key];
    if (position < seen) return last;
  }
  return last;
}

function sortedValueAt(counts: Readonly<Record<string, number>>): (position: number) => number {
  const sorted = Object.entries(counts)
    .map(([value, count]) => [Number(value), count] as const)
    .sort((a, b) => a[0] - b[0]);
  return (position) => {
    let seen = 0;
    for (const [value, count] of sorted) {
      seen += count;
      if (position < seen) return value;
    }
    return sorted[sorted.length - 1][0];
  };
}
