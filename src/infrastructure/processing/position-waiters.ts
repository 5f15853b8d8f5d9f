interface Waiter {
  position: number;
  resolve(reached: boolean): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | null;
}

/** Callers waiting for a consumer to reach a log position (read-your-writes, readiness). */
export class PositionWaiters {
  private waiting: Waiter[] = [];

  waitFor(position: number, current: number, timeoutMs: number): Promise<boolean> {
    if (current >= position) return Promise.resolve(true);
    return new Promise<boolean>((resolve, reject) => {
      const waiter: Waiter = { position, resolve, reject, timer: null };
      if (Number.isFinite(timeoutMs)) {
        waiter.timer = setTimeout(() => {
          this.waiting = this.waiting.filter((other) => other !== waiter);
          resolve(false);
        }, timeoutMs);
      }
      this.waiting.push(waiter);
    });
  }

  reached(position: number): void {
    if (this.waiting.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of this.waiting) {
      if (waiter.position <= position) {
        if (waiter.timer) clearTimeout(waiter.timer);
        waiter.resolve(true);
      } else still.push(waiter);
    }
    this.waiting = still;
  }

  rejectAll(error: Error): void {
    for (const waiter of this.waiting) {
      if (waiter.timer) clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiting = [];
  }
}
