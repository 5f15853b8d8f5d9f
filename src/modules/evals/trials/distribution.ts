/** The scored outcome across a run's trials. */
export interface Distribution {
  trials: number;
  passed: number;
  failed: number;
  scored: number;
  voided: number;
  /** Null when nothing was scored: no verdict is not "always fails". */
  passRate: number | null;
  commandMin: number | null;
  commandMedian: number | null;
  commandMax: number | null;
  deterministic: boolean;
}

export interface TrialTally {
  status: string;
  commands: number;
}

/**
 * `scored` = passed + failed; `passRate` = passed / scored; command statistics over the scored
 * trials (rate and statistics null when nothing was scored); `deterministic` = more than one
 * scored trial, all agreeing, and commandMax − commandMin ≤ 4.
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
  const commandMin = counts.length ? counts[0] : null;
  const commandMax = counts.length ? counts[counts.length - 1] : null;
  return {
    trials: trials.length,
    passed,
    failed,
    scored,
    voided,
    passRate: scored === 0 ? null : passed / scored,
    commandMin,
    commandMedian: median(counts),
    commandMax,
    deterministic: scored > 1 && (passed === 0 || failed === 0) && counts[counts.length - 1] - counts[0] <= 4,
  };
}

/**
 * A distribution as RunFinished stored it: those stored before the rates could be null said 0
 * when nothing was scored, which read as "always fails"; they read as null now.
 */
export function storedDistribution(stored: Distribution): Distribution {
  if (stored.scored > 0) return stored;
  return { ...stored, passRate: null, commandMin: null, commandMedian: null, commandMax: null };
}

function median(sorted: number[]): number | null {
  if (sorted.length === 0) return null;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
