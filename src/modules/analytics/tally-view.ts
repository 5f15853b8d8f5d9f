import { Interval, wilsonInterval } from '#shared/statistics';
import { histogramMedian, Tally } from './tally';

export interface CostView {
  knownActualUsd: number;
  allocatedUsd: number;
  estimatedEquivalentUsd: number;
  /** Some trial had a cost component without a price: the sums are lower bounds. */
  incomplete: boolean;
}

/** The numbers every analytics answer gives for a set of trials. */
export interface TallyView {
  trials: number;
  scored: number;
  passed: number;
  failed: number;
  voided: number;
  /** passed / scored; null when nothing was scored. */
  passRate: number | null;
  /** The Wilson 95% interval of the pass rate; null when nothing was scored. */
  interval: Interval | null;
  /** What every trial cost (void ones included), summed. */
  costs: CostView;
  /** `costs` divided by the passed trials: what a success costs; null with none passed. */
  costPerPassedTrial: CostView | null;
  /** Median commands of a scored trial. */
  commandMedian: number | null;
  /** Median model (agent) time of a scored trial, in ms, within 5 % (kept on a 10 % scale). */
  modelMsMedian: number | null;
}

const round = (usd: number) => Math.round(usd * 1e8) / 1e8;

export function tallyView(tally: Tally): TallyView {
  const scored = tally.passed + tally.failed;
  const costs: CostView = {
    knownActualUsd: tally.knownActualUsd,
    allocatedUsd: tally.allocatedUsd,
    estimatedEquivalentUsd: tally.estimatedEquivalentUsd,
    incomplete: tally.costIncomplete,
  };
  const per = (usd: number) => round(usd / tally.passed);
  return {
    trials: tally.verdicts,
    scored,
    passed: tally.passed,
    failed: tally.failed,
    voided: tally.voided,
    passRate: scored === 0 ? null : tally.passed / scored,
    interval: wilsonInterval(tally.passed, scored),
    costs,
    costPerPassedTrial:
      tally.passed === 0
        ? null
        : {
            knownActualUsd: per(costs.knownActualUsd),
            allocatedUsd: per(costs.allocatedUsd),
            estimatedEquivalentUsd: per(costs.estimatedEquivalentUsd),
            incomplete: costs.incomplete,
          },
    commandMedian: histogramMedian(tally.commandCounts),
    modelMsMedian: histogramMedian(tally.modelMsCounts),
  };
}
