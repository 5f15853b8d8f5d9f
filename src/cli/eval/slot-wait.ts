import { SlotsTaken } from './start-batch';

/** The first pause after a 409, doubled after each one up to the longest. */
export const FIRST_PAUSE_MS = 1000;
export const LONGEST_PAUSE_MS = 30_000;

/** A batch waited --wait-timeout for a slot and none came free. */
export class WaitedTooLong extends Error {}

/**
 * Rings when a slot may have come free (a batch of this command ended), so a waiting start
 * tries again at once instead of at the end of its pause.
 */
export class SlotBell {
  private waiters: Array<() => void> = [];

  ring(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves after `ms`, at the next ring, or when `signal` aborts, whichever comes first. */
  pause(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((waiter) => waiter !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      this.waiters.push(done);
    });
  }
}

export interface SlotWait {
  timeoutMs: number;
  signal: AbortSignal;
  bell: SlotBell;
  /** Called once, at the first 409 (unless the wait is 0: no wait, no word of one). */
  onWait: () => void;
}

/**
 * Starts a batch, and while the organization runs as many batches as it may (409) waits and
 * tries again: after 1 s, then twice as long each time up to 30 s (a fifth either way, so the
 * parallel jobs of one organization do not all knock together), or at once when the bell rings.
 * Gives up with WaitedTooLong once the first 409 is `timeoutMs` old; null when `signal` stopped it.
 */
export async function startWhenSlotFree<T>(start: () => Promise<T>, wait: SlotWait): Promise<T | null> {
  let since: number | null = null;
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    if (wait.signal.aborted) return null;
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof SlotsTaken)) throw error;
      if (since === null) {
        since = Date.now();
        if (wait.timeoutMs > 0) wait.onWait();
      }
      const left = since + wait.timeoutMs - Date.now();
      if (left <= 0) throw new WaitedTooLong(error.message);
      await wait.bell.pause(Math.min(left, pause * (0.8 + Math.random() * 0.4)), wait.signal);
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    }
  }
}
