/** The scored outcome across a run's trials. */
export interface Distribution {
  trials: number;
  passed: number;
  failed: number;
  scored: number;
  voided: number;
  passRate: number;
  commandMin: number;
  commandMedian: number;
  commandMax: number;
  deterministic: boolean;
}

export interface TrialTally {
  status: string;
  commands: number;
}

/**
 * `scored` = passed + failed; `passRate` = passed / scored (0 when nothing was scored);
 * command statistics over the scored trials; `deterministic` = more than one scored trial, all
 * agreeing, and commandMax − commandMin ≤ 4.
 */
export function computeDistribution(trials: readonly TrialTally[]): Distribution {
  const passed = trials.filter((trial) => trial.status === 'passed').length;
  const failed = trials.filter((trial) => trial.status === 'failed').length;
  const voided = trials.filter((trial) => trial.status === 'void').length;
  const scored = passed + failed;
  const counts = trials
    .filter((trial) => trial.status === 'passed' || trial.status === 'failed')
    .map((trial) => trial.commands)
    .sort((a, b) => a - b);
  const commandMin = counts.length ? counts[0] : 0;
  const commandMax = counts.length ? counts[counts.length - 1] : 0;
  return {
    trials: trials.length,
    passed,
    failed,
    scored,
    voided,
    passRate: scored === 0 ? 0 : passed / scored,
    commandMin,
    commandMedian: median(counts),
    commandMax,
    deterministic: scored > 1 && (passed === 0 || failed === 0) && commandMax - commandMin <= 4,
  };
}

function median(sorted: number[]): number {
  if (sorted.length === 0) return 0;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
