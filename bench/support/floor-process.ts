import { ChildProcess, fork } from 'node:child_process';
import type { SandboxDriverName } from '#modules/evals/execution';
import { BareMeasure, bareBatchMeasured, TRIALS, Workload } from './workloads';

/**
 * The floor's bare batches, spawned from a child process of their own that loads only what
 * spawning needs (~70 MB, the service's spawn helper's size), not from the bench's process (every
 * suite loaded, ~145 MB). fork() copies the spawning process's page tables: the same batches cost
 * 15–25 % more from the larger process, which flattered the service's ratio.
 */
interface FloorRequest {
  driver: SandboxDriverName;
  workload: Workload;
  trials: number;
  under?: string;
}

type FloorReply = { measure: BareMeasure } | { error: string };

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
    const request: FloorRequest = { driver, workload, trials: TRIALS, under };
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
  process.on('message', (request: FloorRequest) => {
    const reply = (message: FloorReply) => process.send?.(message);
    bareBatchMeasured(request.driver, request.workload, request.trials, request.under).then(
      (measure) => reply({ measure }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
}
