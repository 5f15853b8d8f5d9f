import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareSpawn, SandboxDriverName } from '#trial-runner';
import type { ProcessLauncher } from '#trial-runner';
import { spreadTrialDirectories } from '#trial-runner';
import { BenchServer, CpuSplit, processCpu } from './child-server';
import { tempDir } from './sqlite-log';

/**
 * The throughput workloads: 100 trials, 8 at once, each a command and a verify. The
 * same two processes run through Assay, through a peer, and bare (the machine's floor).
 */
export interface Workload {
  name: string;
  run: string;
  verify: string;
}

export const TRIALS = 100;
export const AT_ONCE = 8;
/** 10 cases × 10 trials: 100 trials in one batch. */
const CASES = 10;

export const TRIVIAL: Workload = { name: 'write a file, verify it', run: 'echo ok > out.txt', verify: 'grep -qx ok out.txt' };
export const SLEEP: Workload = { name: 'sleep 1 s', run: 'sleep 1', verify: 'true' };

/** What `waves` of AT_ONCE one-second trials take at best. */
export const waveFloorMs = (trials: number): number => Math.ceil(trials / AT_ONCE) * 1000;

export interface BatchMeasure {
  wallMs: number;
  serverCpuMs: number;
  /** CPU ms per trial: the server's user and kernel time, the spawn helper's, and the trials' processes'. */
  perTrial: CpuSplit;
}

/** One batch of the workload on a running server: wall time from the start request to the batch read finished. */
export async function assayBatch(server: BenchServer, workload: Workload): Promise<BatchMeasure> {
  const cpuBefore = server.cpuMs();
  const splitBefore = server.cpuSplit();
  const started = Date.now();
  const batch = await server.call('evals.batches.start', {
    suite: { id: 'bench', prompt: 'benchmark' },
    cases: Array.from({ length: CASES }, (_, i) => ({ id: `c${i}`, verify: workload.verify })),
    variants: [{ harness: 'command', model: 'none', profile: { run: workload.run } }],
    trials: TRIALS / CASES,
  });
  // Followed as `assay eval` follows a batch, on its watch stream (small events pushed as they
  // happen), not by polling the whole batch (a get of a finished 100-trial batch is ~240 KB).
  await server.watchUntilEnd(batch.id);
  let finished = await server.call('evals.batches.get', { id: batch.id });
  // The stream reads the log; the read models may show the end a moment later.
  for (let tries = 0; finished.status === 'running' && tries < 100; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    finished = await server.call('evals.batches.get', { id: batch.id });
  }
  // The server's clock is this machine's clock: the batch's end less the start request's send.
  const wallMs = (typeof finished.finishedAt === 'number' ? finished.finishedAt : Date.parse(finished.finishedAt)) - started;
  if (!Number.isFinite(wallMs)) throw new Error(`The bench batch has no finishedAt: ${JSON.stringify(finished.finishedAt)}`);
  const serverCpuMs = server.cpuMs() - cpuBefore;
  const splitAfter = server.cpuSplit();
  const perTrial = {
    serverUser: (splitAfter.serverUser - splitBefore.serverUser) / TRIALS,
    serverKernel: (splitAfter.serverKernel - splitBefore.serverKernel) / TRIALS,
    helpers: (splitAfter.helpers - splitBefore.helpers) / TRIALS,
    trialProcesses: (splitAfter.trialProcesses - splitBefore.trialProcesses) / TRIALS,
  };
  if (finished.status !== 'finished') throw new Error(`The bench batch ended ${finished.status}: ${JSON.stringify(finished).slice(0, 500)}`);
  const trials = (finished.runs as Array<{ trials: Array<{ status: string }> }>).flatMap((run) => run.trials);
  const passed = trials.filter((trial) => trial.status === 'passed').length;
  if (passed !== TRIALS) throw new Error(`${passed} of ${TRIALS} bench trials passed: ${JSON.stringify(trials.find((t) => t.status !== 'passed'))}`);
  return { wallMs, serverCpuMs, perTrial };
}

/**
 * The machine's floor for the same processes: each trial's command then its verify, in a fresh
 * directory, AT_ONCE trials at a time, with the same sandbox driver and no trial machinery.
 */
export async function bareBatch(driver: SandboxDriverName, workload: Workload, trials = TRIALS): Promise<number> {
  return (await bareBatchMeasured(driver, workload, trials)).wallMs;
}

export interface BareMeasure {
  wallMs: number;
  /** CPU ms per trial: this process's (it spawns the processes, as the spawn helper does for the server), and the processes'. */
  perTrial: { spawner: number; processes: number };
}

/**
 * The bare batch, with the CPU it took: this process's own (nothing else runs in it meanwhile) and
 * its waited-for children's. Spawned from this process, or through `launcher` (a spawn helper, whose
 * own CPU is then in neither figure: it is not waited for).
 */
export async function bareBatchMeasured(
  driver: SandboxDriverName,
  workload: Workload,
  trials = TRIALS,
  under?: string,
  launcher?: ProcessLauncher,
): Promise<BareMeasure> {
  const before = processCpu('self');
  const wallMs = await bareRuns(driver, workload, trials, under, launcher);
  const after = processCpu('self');
  return {
    wallMs,
    perTrial: {
      spawner: (after.user + after.kernel - before.user - before.kernel) / trials,
      processes: (after.children - before.children) / trials,
    },
  };
}

/**
 * The bare runs' directories go in a temporary directory, under `under` when given (the trial
 * directories' file system), with the allocator hint Assay gives its trials root (ext4 spreads
 * them over its block groups): the floor gets every help the service gets.
 */
async function bareRuns(driver: SandboxDriverName, workload: Workload, trials: number, under?: string, launcher?: ProcessLauncher): Promise<number> {
  const root = tempDir('bare', under);
  spreadTrialDirectories(root.dir);
  try {
    let next = 0;
    const worker = async () => {
      while (next < trials) {
        const workspace = path.join(root.dir, String(next++));
        fs.mkdirSync(workspace);
        await bareSpawn(driver, workspace, workload.run, { launcher });
        const verified = await bareSpawn(driver, workspace, workload.verify, { launcher });
        if (verified.status !== 0) throw new Error(`The bare verify failed under ${driver}: ${verified.output}`);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: AT_ONCE }, worker));
    return performance.now() - started;
  } finally {
    root.remove();
  }
}
