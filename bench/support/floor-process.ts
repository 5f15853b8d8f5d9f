import { ChildProcess, fork } from 'node:child_process';
import type { SandboxDriverName } from '#trial-runner';
import { SpawnHelper } from '#trial-runner';
import type { StraightMeasure, StraightTrials } from './straight-trials';
import { BareMeasure, bareBatchMeasured, TRIALS, Workload } from './workloads';

/**
 * The floor's bare batches, spawned from a child process of their own that loads only what
 * spawning needs (~70 MB, the service's spawn helper's size), not from the bench's process (every
 * suite loaded, ~145 MB). fork() copies the spawning process's page tables: the same batches cost
 * 15–25 % more from the larger process, which flattered the service's ratio.
 *
 * Given straight batches (straight-trials.ts), the process loads the trial runner and the event
 * log as well, and keeps one of each per driver and directory for its life: the bench gives those
 * to a process of their own, never to the one that runs the floor's.
 */
interface FloorRequest {
  /** `helper`: the bare runs started through a spawn helper, as the service starts a trial's commands. */
  kind: 'bare' | 'straight' | 'helper';
  driver: SandboxDriverName;
  workload: Workload;
  trials: number;
  under?: string;
}

type FloorReply = { measure: BareMeasure | StraightMeasure } | { error: string };

export class FloorProcess {
  private constructor(private readonly child: ChildProcess) {}

  /** Runs `work` with a floor process, stopped after it whatever happens. */
  static async using<T>(work: (floor: FloorProcess) => Promise<T>): Promise<T> {
    const floor = new FloorProcess(fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    try {
      return await work(floor);
    } finally {
      await floor.stop();
    }
  }

  /** One bare batch of the workload, measured in the floor process (its CPU, and its children's). */
  batch(driver: SandboxDriverName, workload: Workload, under?: string): Promise<BareMeasure> {
    return this.request({ kind: 'bare', driver, workload, trials: TRIALS, under }) as Promise<BareMeasure>;
  }

  /** The same bare batch, its processes started through the spawn helper the service would use (process-launcher.ts). */
  helperBatch(driver: SandboxDriverName, workload: Workload, under?: string): Promise<BareMeasure> {
    return this.request({ kind: 'helper', driver, workload, trials: TRIALS, under }) as Promise<BareMeasure>;
  }

  /** One batch through the trial runner and the event log, with nothing of the service around them (straight-trials.ts). */
  straightBatch(driver: SandboxDriverName, workload: Workload, under?: string): Promise<StraightMeasure> {
    return this.request({ kind: 'straight', driver, workload, trials: TRIALS, under }) as Promise<StraightMeasure>;
  }

  private request(request: FloorRequest): Promise<BareMeasure | StraightMeasure> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`The floor process exited (${code}) during a batch.`));
      this.child.once('exit', onExit);
      this.child.once('message', (reply: FloorReply) => {
        this.child.off('exit', onExit);
        if ('error' in reply) reject(new Error(`A floor batch failed: ${reply.error}`));
        else resolve(reply.measure);
      });
      this.child.send(request);
    });
  }

  private stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    return exited;
  }
}

/** In the floor process: a batch per request, until the bench disconnects. */
if (require.main === module) {
  const straight = new Map<string, StraightTrials>();
  const straightBatch = async ({ driver, workload, under }: FloorRequest): Promise<StraightMeasure> => {
    const key = `${driver}\0${under ?? ''}`;
    let trials = straight.get(key);
    if (trials === undefined) {
      // Loaded on first use only: a floor process that spawns bare runs stays small.
      const { StraightTrials: Straight } = await import('./straight-trials');
      trials = Straight.open(driver, under);
      straight.set(key, trials);
    }
    return trials.batch(workload);
  };
  let helper: SpawnHelper | null = null;
  const helperBatch = async ({ driver, workload, trials, under }: FloorRequest): Promise<BareMeasure> => {
    helper ??= new SpawnHelper();
    return bareBatchMeasured(driver, workload, trials, under, helper);
  };
  process.on('message', (request: FloorRequest) => {
    const reply = (message: FloorReply) => process.send?.(message);
    const batch =
      request.kind === 'straight'
        ? straightBatch(request)
        : request.kind === 'helper'
          ? helperBatch(request)
          : bareBatchMeasured(request.driver, request.workload, request.trials, request.under);
    batch.then(
      (measure) => reply({ measure }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
  // The logs and directories go with the bench's disconnect; the spawn helper follows this process.
  process.on('disconnect', () => {
    void Promise.all([...straight.values()].map((trials) => trials.close())).finally(() => process.exit(0));
  });
}
