/** How the runner endpoints and the silence watch run: from ASSAY_RUNNER_LEASE_MS, ASSAY_RUNNER_SILENCE_MS and ASSAY_OUTPUT_CAP. */
export interface RunnerSettings {
  leaseMs: number;
  silenceMs: number;
  /** The server's cap on a command's captured output: a report's outputs respect it too. */
  outputCapBytes: number;
}

export type RunnerTimings = Pick<RunnerSettings, 'leaseMs' | 'silenceMs'>;

export const DEFAULT_RUNNER_TIMINGS: RunnerTimings = { leaseMs: 900_000, silenceMs: 600_000 };

export const RUNNER_SETTINGS = Symbol('RunnerSettings');
