import type { SandboxDriverName } from '../execution-config';
import { DEFAULT_TRIAL_LIMITS } from '../trial-limits';
import { OutputCollector } from '../output/captured-output';
import { BubblewrapDriver, processDriver } from './sandbox-driver';
import { directLauncher, ProcessLauncher } from './process-launcher';
import { runCommand } from './sandboxed-command';

export interface BareSpawnResult {
  status: number;
  output: string;
  durationMs: number;
}

/**
 * One `sh -c command` in a sandbox driver with the same flags a trial uses, and none of the
 * trial machinery (no directory set-up, snapshots, trajectory, user of its own): the benchmark's
 * baseline for a trial's orchestration overhead. `workspace` must exist; it is the only writable path.
 * Spawned from this process unless a launcher is given.
 */
export async function bareSpawn(
  driver: SandboxDriverName,
  workspace: string,
  command: string,
  options: { network?: boolean; hiddenPaths?: string[]; env?: Record<string, string>; timeoutMs?: number; launcher?: ProcessLauncher } = {},
): Promise<BareSpawnResult> {
  const sandbox = driver === 'bubblewrap' ? new BubblewrapDriver(options.hiddenPaths ?? []) : processDriver;
  const launch = sandbox.launch(command, {
    trialDir: workspace,
    workspace,
    network: options.network ?? false,
    user: null,
    limits: DEFAULT_TRIAL_LIMITS,
  });
  const collector = new OutputCollector(65_536);
  const env = options.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspace };
  const started = performance.now();
  const result = await runCommand({
    launch,
    env,
    stdin: null,
    timeoutMs: options.timeoutMs ?? 60_000,
    collector,
    launcher: options.launcher ?? directLauncher,
  });
  const durationMs = performance.now() - started;
  if (result.startFailure !== null) throw new Error(result.startFailure);
  return { status: result.status, output: collector.keptText(), durationMs };
}
