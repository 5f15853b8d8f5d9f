import type { BatchView } from './batch-view';

/** The exit codes of `assay eval` (docs/guide/cli.md, "Exit codes"). */
export const EXIT = {
  /** Every gate passed. */
  passed: 0,
  /** A gate failed (a failed trial; under strict, a void one), or the batch could not run. */
  failed: 1,
  /** Bad usage, an invalid suite file, a refused key, an unreachable server: fix and run again. */
  usage: 2,
  /** Nothing was measured: no trial was scored (all void), so no gate but `never` can say it passed. */
  nothingMeasured: 3,
  /** Ctrl-C: the following stopped (a local batch was finished as cancelled). */
  interrupted: 130,
} as const;

export type FailOn = 'failures' | 'strict' | 'never';
export const FAIL_ON: readonly FailOn[] = ['failures', 'strict', 'never'];

/**
 * The gate on a suite whose batches ended (one view over all of them). No scored trial is 3
 * under every gate but `never`: a gate that read nothing must not pass. A batch that `failed`
 * means the server could not run it: that is 1 whatever --fail-on says (and 2 stays for what
 * the user must fix before trying again).
 */
export function gateExit(batch: BatchView, failOn: FailOn): number {
  const trials = batch.runs.flatMap((run) => run.trials);
  const scored = trials.some((trial) => trial.status === 'passed' || trial.status === 'failed');
  if (failOn !== 'never' && !scored) return EXIT.nothingMeasured;
  if (batch.status === 'failed') return EXIT.failed;
  if (failOn === 'never') return EXIT.passed;
  if (trials.some((trial) => trial.status === 'failed')) return EXIT.failed;
  const unjudged = trials.some((trial) => trial.status === 'void') || batch.runs.some((run) => run.status === 'failed');
  if (failOn === 'strict' && unjudged) return EXIT.failed;
  return EXIT.passed;
}

/** Several files: the worst outcome wins (130 above 2 above 3 above 1 above 0). */
export function worstExit(codes: number[]): number {
  const rank: number[] = [EXIT.passed, EXIT.failed, EXIT.nothingMeasured, EXIT.usage, EXIT.interrupted];
  return codes.reduce<number>((worst, code) => (rank.indexOf(code) > rank.indexOf(worst) ? code : worst), EXIT.passed);
}
