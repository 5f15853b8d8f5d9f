import { ApiRefusal, AssayApi, ServerUnreachable } from './api-client';
import type { BatchView } from './batch-view';

export const POLL_INTERVAL_MS = 500;
/** With the watch stream open, the batch is read again on its events; this is only a safety net. */
const STREAMED_POLL_MS = 10_000;
/** Events that come together (a trial scored, its run finished) cause one read. */
const DEBOUNCE_MS = 100;
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
 * Reads `evals.batches.get` until the batch is finished or failed, showing each answer; the
 * answer as it came (for --json). Null when `signal` stopped the following first. The batch is
 * read again on each event of its watch stream (`evals.batches.watch`) when the server offers
 * one, else every POLL_INTERVAL_MS. A server that stays unreachable, or keeps failing, for
 * LOST_AFTER_MS ends the following with its error.
 */
export async function followBatch(api: AssayApi, batchId: string, onUpdate: (batch: BatchView) => void, signal: AbortSignal): Promise<BatchView | null> {
  const stop = new AbortController();
  const stopStream = () => stop.abort();
  signal.addEventListener('abort', stopStream);
  const watch = new BatchWatch(api, batchId, stop.signal);
  try {
    return await readUntilEnded(api, batchId, onUpdate, signal, watch);
  } finally {
    signal.removeEventListener('abort', stopStream);
    stop.abort();
  }
}

async function readUntilEnded(
  api: AssayApi,
  batchId: string,
  onUpdate: (batch: BatchView) => void,
  signal: AbortSignal,
  watch: BatchWatch,
): Promise<BatchView | null> {
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
    await watch.next(signal);
  }
  return null;
}

/**
 * The batch's watch stream as a wake-up: `next` resolves soon after the stream's next event, or
 * after the poll interval when there is no stream (an older server, a refusal, a dropped
 * connection: polling takes over, as before the stream existed).
 */
class BatchWatch {
  private streaming = false;
  private pending = false;
  private wake: (() => void) | null = null;

  constructor(api: AssayApi, batchId: string, stop: AbortSignal) {
    void this.read(api, batchId, stop);
  }

  async next(signal: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false;
      await sleep(DEBOUNCE_MS, signal);
      return;
    }
    const waited = new Promise<void>((resolve) => (this.wake = resolve));
    await Promise.race([waited, sleep(this.streaming ? STREAMED_POLL_MS : POLL_INTERVAL_MS, signal)]);
    this.wake = null;
    this.pending = false;
    await sleep(this.streaming ? DEBOUNCE_MS : 0, signal);
  }

  private async read(api: AssayApi, batchId: string, stop: AbortSignal): Promise<void> {
    const stream = await api.openStream('evals.batches.watch', { id: batchId }, stop);
    if (stream === null) return;
    this.streaming = true;
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        const blocks = buffered.split('\n\n');
        buffered = blocks.pop() ?? '';
        // A comment block (`: ping`) keeps the connection; only events say something changed.
        if (blocks.some((block) => block.split('\n').some((line) => line.startsWith('event:') || line.startsWith('data:')))) this.notify();
      }
    } catch {
      // A dropped stream: polling takes over.
    } finally {
      this.streaming = false;
      this.notify();
    }
  }

  private notify(): void {
    this.pending = true;
    this.wake?.();
  }
}
