/**
 * Runs at most `maxParallel` trials at once in this process, shared fairly by the running
 * batches: each free place goes to the batch with a trial waiting that runs the fewest trials
 * now, the longest-waiting batch first among equals.
 */
export class TrialScheduler {
  private readonly queues = new Map<string, string[]>();
  private readonly runningByBatch = new Map<string, number>();
  private readonly known = new Set<string>();
  private running = 0;
  private stopped = false;

  constructor(
    private readonly maxParallel: number,
    private readonly runTrial: (trialId: string) => Promise<void>,
  ) {}

  get active(): number {
    return this.running;
  }

  /** Queues a trial once; queuing it again does nothing. */
  enqueue(batchId: string, trialId: string): void {
    if (this.known.has(trialId) || this.stopped) return;
    this.known.add(trialId);
    const queue = this.queues.get(batchId);
    if (queue) queue.push(trialId);
    else this.queues.set(batchId, [trialId]);
    this.pump();
  }

  stop(): void {
    this.stopped = true;
    this.queues.clear();
  }

  private pump(): void {
    while (!this.stopped && this.running < this.maxParallel) {
      const batchId = this.nextBatch();
      if (batchId === null) return;
      const queue = this.queues.get(batchId);
      const trialId = queue?.shift();
      if (!queue || trialId === undefined) throw new Error(`The scheduler chose batch "${batchId}", whose queue is empty.`);
      if (queue.length === 0) this.queues.delete(batchId);
      this.started(batchId, 1);
      void this.runTrial(trialId).finally(() => {
        this.started(batchId, -1);
        this.known.delete(trialId);
        this.pump();
      });
    }
  }

  private started(batchId: string, delta: number): void {
    this.running += delta;
    const now = (this.runningByBatch.get(batchId) ?? 0) + delta;
    if (now === 0) this.runningByBatch.delete(batchId);
    else this.runningByBatch.set(batchId, now);
  }

  /** Map order is insertion order: among equally busy batches, the one queued first wins. */
  private nextBatch(): string | null {
    let best: string | null = null;
    for (const batchId of this.queues.keys()) {
      if (best === null || (this.runningByBatch.get(batchId) ?? 0) < (this.runningByBatch.get(best) ?? 0)) best = batchId;
    }
    return best;
  }
}
