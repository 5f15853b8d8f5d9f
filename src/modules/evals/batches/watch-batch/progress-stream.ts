import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { EventStore } from '#infrastructure/event-store/event-store.port';
import type { JsonLogger } from '#infrastructure/logging/json-logger';
import { endsTheBatch, progressOf, serialize } from './batch-progress';

/** A comment line every 15 s keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;

export interface ProgressStreamOptions {
  eventStore: EventStore;
  logger: JsonLogger;
  batchId: string;
  /** Exclusive: the stream carries the batch's events after this log position (-1: from the start). */
  after: number;
  /** Called once, when the stream ends for whatever reason. */
  onClose: () => void;
}

/**
 * The batch's progress as text/event-stream, fed by a catch-up subscription to the log from the
 * position asked: the stored events first, then live ones, in position order, so a watcher that
 * resumes after an event id misses nothing and sees nothing twice. It ends after the batch's
 * end event, when the client goes away, or when `close` is called.
 */
export function progressStream(options: ProgressStreamOptions): { body: PassThrough; close: () => void } {
  const { eventStore, logger, batchId, after } = options;
  const body = new PassThrough();
  const subscription = eventStore.subscribeToAll(after >= 0 ? { after } : {});
  const state = { closed: false };
  const close = () => {
    if (state.closed) return;
    state.closed = true;
    clearInterval(heartbeat);
    void subscription.close();
    body.end();
    options.onClose();
  };
  const heartbeat = setInterval(() => body.write(': ping\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  body.once('close', close);
  // A reconnecting EventSource waits this long, then sends Last-Event-ID.
  body.write('retry: 2000\n\n');
  const closedSignal = once(body, 'close').then(
    () => undefined,
    () => undefined,
  );
  void (async () => {
    try {
      for await (const event of subscription) {
        if (state.closed) break;
        const progress = progressOf(event, batchId);
        if (!progress) continue;
        if (!body.write(serialize(progress))) await Promise.race([once(body, 'drain'), closedSignal]);
        if (endsTheBatch(progress)) break;
      }
    } catch (error) {
      logger.warn('a batch watch stream failed', { batchId, error: error instanceof Error ? error.message : String(error) });
    } finally {
      close();
    }
  })();
  return { body, close };
}
