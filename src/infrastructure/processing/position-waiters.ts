interface Waiter {
  position: number;
  resolve(reached: boolean): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | null;
}

/** Callers waiting for a consumer to reach a log position (read-your-writes, readiness). */
export class PositionWaiters {
  private waiting: Waiter[] = [];
  /** The lowest position waited for: an event before it resolves nobody (checked per event). */
  private lowest = Number.POSITIVE_INFINITY;

  waitFor(position: number, current: number, timeoutMs: number): Promise<boolean> {
    if (current >= position) return Promise.resolve(true);
    return new Promise<boolean>((resolve, reject) => {
      const waiter: Waiter = { position, resolve, reject, timer: null };
      if (Number.isFinite(timeoutMs)) {
        waiter.timer = setTimeout(() => {
          this.waiting = this.waiting.filter((other) => other !== waiter);
          this.lowest = lowestOf(this.waiting);
          resolve(false);
        }, timeoutMs);
      }
      this.waiting.push(waiter);
      this.lowest = Math.min(this.lowest, position);
    });
  }

  reached(position: number): void {
    if (position < this.lowest) return;
    const still: Waiter[] = [];
    for (const waiter of this.waiting) {
      if (waiter.position <= position) {
        if (waiter.timer) clearTimeout(waiter.timer);
        waiter.resolve(true);
      } else still.push(waiter);
    }
    this.waiting = still;
    this.lowest = lowestOf(still);
  }

  rejectAll(error: Error): void {
    for (const waiter of this.waiting) {
      if (waiter.timer) clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiting = [];
    this.lowest = Number.POSITIVE_INFINITY;
  }
}

function lowestOf(waiting: readonly Waiter[]): number {
  return waiting.reduce((lowest, waiter) => Math.min(lowest, waiter.position), Number.POSITIVE_INFINITY);
}
