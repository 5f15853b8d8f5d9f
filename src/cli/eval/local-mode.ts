import { LocalBatchOptions, startLocalBatch as startOnThisMachine, StartedLocalBatch } from '../local/local-runner';

export { RunnerRefusal, RunnerUnavailable } from '../local/runner-calls';

export type LocalStart = LocalBatchOptions;
export type LocalBatch = StartedLocalBatch;

/**
 * The one file of the eval command that knows the local runner: it starts the batch through the
 * runner endpoints and runs its trials on this machine, in the server's own trial runner.
 */
export function startLocalBatch(options: LocalStart): Promise<LocalBatch> {
  return startOnThisMachine(options);
}

/** The user's variables the file lists by name, read from this process's environment; the missing ones by name. */
export function localEnvironment(names: string[], env: NodeJS.ProcessEnv): { values: Record<string, string>; missing: string[] } {
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of names) {
    const value = env[name];
    if (value === undefined) missing.push(name);
    else values[name] = value;
  }
  return { values, missing };
}

/** The bounds of ASSAY_RUNNER_BEAT_MS: a beat at least every 100 ms is pointless load, one past an hour outlives any silence window worth having. */
const BEAT_MS = { min: 100, max: 3_600_000 };

/**
 * ASSAY_RUNNER_BEAT_MS, for tests and diagnostics: how often the local runner beats (unset: the
 * runner's 60 s). A value that is not a whole number of milliseconds in bounds is the message
 * to show; the command refuses it as bad usage.
 */
export function beatInterval(env: NodeJS.ProcessEnv): { ms?: number; problem?: string } {
  const value = env.ASSAY_RUNNER_BEAT_MS;
  if (value === undefined || value === '') return {};
  const ms = Number(value);
  if (!/^\d+$/.test(value) || ms < BEAT_MS.min || ms > BEAT_MS.max) {
    return { problem: `ASSAY_RUNNER_BEAT_MS takes a whole number of milliseconds from ${BEAT_MS.min} to ${BEAT_MS.max}, not "${value}".` };
  }
  return { ms };
}
