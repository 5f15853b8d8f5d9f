import { ApiRefusal, AssayApi, ServerUnreachable } from './api-client';
import type { BatchView } from './batch-view';

export const POLL_INTERVAL_MS = 500;
/** How long the server may be unreachable (or failing) while a batch is followed before giving up. */
const LOST_AFTER_MS = 30_000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/**
 * Polls `evals.batches.get` until the batch is finished or failed, showing each answer; the
 * answer as it came (for --json). Null when `signal` stopped the following first. A server that
 * stays unreachable, or keeps failing, for LOST_AFTER_MS ends the following with its error.
 */
export async function followBatch(api: AssayApi, batchId: string, onUpdate: (batch: BatchView) => void, signal: AbortSignal): Promise<BatchView | null> {
  let failingSince: number | null = null;
  while (!signal.aborted) {
    try {
      const batch = (await api.expect('evals.batches.get', { id: batchId })) as BatchView;
      failingSince = null;
      // Ctrl-C may have come while the answer was on its way: stop without showing it.
      if ((signal as { aborted: boolean }).aborted) return null;
      onUpdate(batch);
      if (batch.status !== 'running') return batch;
    } catch (error) {
      const transient = error instanceof ServerUnreachable || (error instanceof ApiRefusal && error.status >= 500);
      if (!transient) throw error;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > LOST_AFTER_MS) throw error;
    }
    await sleep(POLL_INTERVAL_MS, signal);
  }
  return null;
}
