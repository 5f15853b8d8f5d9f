/**
 * Runs at most `maxParallel` trials at once in this process, shared fairly by the running
 * batches: each free place goes to the next batch in turn that has a trial waiting.
 */
export class TrialScheduler {
  private readonly queues = new Map<string, string[]>();
  private readonly known = new Set<string>();
  private turn: string[] = [];
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
    else {
      this.queues.set(batchId, [trialId]);
      this.turn.push(batchId);
    }
    this.pump();
  }

  stop(): void {
    this.stopped = true;
    this.queues.clear();
    this.turn = [];
  }

  private pump(): void {
    while (!this.stopped && this.running < this.maxParallel) {
      const trialId = this.next();
      if (trialId === null) return;
      this.running += 1;
      void this.runTrial(trialId).finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
  }

  /** Round robin over batches: take from the first batch in turn, then move it to the back. */
  private next(): string | null {
    while (this.turn.length > 0) {
      const batchId = this.turn.shift()!;
      const queue = this.queues.get(batchId)!;
      const trialId = queue.shift()!;
      if (queue.length > 0) this.turn.push(batchId);
      else this.queues.delete(batchId);
      return trialId;
    }
    return null;
  }
}
