import type { AllStreamResolvedEvent } from '@eventstore/db-client';
import type { AllSubscription, RecordedEvent } from '../event-store.port';
import { toDomainEvent, toPositionNumber } from './eventstoredb-events';
import type { SearchedThrough } from './filtered-read';

/** What the client's `subscribeToAll` returns, as far as this wrapper uses it: events, and how far a filter searched. */
export interface SubscriptionSource extends AsyncIterable<AllStreamResolvedEvent | SearchedThrough> {
  unsubscribe(): Promise<void>;
  /** The client emits `confirmation` once the server accepted the subscription. */
  once?(event: 'confirmation', listener: () => void): unknown;
  destroy?(): unknown;
}

/** Opens the client's subscription strictly after a position (from the start when undefined). */
export type OpenSource = (after: number | undefined) => SubscriptionSource;

export interface ResumePolicy {
  /** The wait before the first attempt to resubscribe; each failed attempt doubles it. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Told each time the subscription drops, with why and from where it resumes. */
  onDrop?: (reason: string, resumeAfter: number | undefined) => void;
}

export const DEFAULT_RESUME_POLICY: ResumePolicy = { initialDelayMs: 100, maxDelayMs: 5_000 };

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const CLOSED = Symbol('closed');
type Received = { result: IteratorResult<AllStreamResolvedEvent | SearchedThrough> } | { error: Error };

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The client's catch-up subscription, made to keep the port's promise (every event after the
 * start, in order, no gap, no repeat, until `close()`) across drops: when the server restarts or
 * the network fails, it resubscribes after the last position it delivered, with a backoff, and
 * says it is down meanwhile (`fault`). The server filters out the server's and the chain's
 * streams and says how far it searched; this drops what a stream-name filter cannot (system event
 * types in other streams, unresolved links) and anything at or before the last delivered
 * position, and ends a pending `next()` as soon as it is closed (cancelling the gRPC call does
 * not always end the client's stream).
 *
 * Each wait races the read against a promise made for that wait alone: racing every read
 * against one long-lived promise would leave a reaction, holding the event, on it per read.
 */
export class ResumingAllSubscription implements AllSubscription {
  /** Why the subscription cannot receive events now, or null while it is up. */
  fault: string | null = null;
  private source: SubscriptionSource;
  private events: AsyncIterator<AllStreamResolvedEvent | SearchedThrough>;
  private closed = false;
  private readonly wakeOnClose = new Set<() => void>();
  private failedAttempts = 0;

  constructor(
    private readonly open: OpenSource,
    private lastDelivered: number | undefined,
    private readonly onClose: () => void,
    private readonly policy: ResumePolicy = DEFAULT_RESUME_POLICY,
  ) {
    this.source = this.attach(open(lastDelivered));
    this.events = this.source[Symbol.asyncIterator]();
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    return {
      next: () => this.next(),
      return: async () => {
        await this.close();
        return DONE;
      },
    };
  }

  /** The position a resubscription would start after: the last event delivered, or further, as far as the server's filter searched. */
  get resumesAfter(): number | undefined {
    return this.lastDelivered;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const wake of this.wakeOnClose) wake();
    this.onClose();
    await this.discard(this.source);
  }

  private async next(): Promise<IteratorResult<RecordedEvent>> {
    while (!this.closed) {
      const received = await this.untilClosed(this.receive());
      if (received === CLOSED) return DONE;
      if ('error' in received || received.result.done) {
        await this.resume('error' in received ? received.error : new Error('the server ended the subscription'));
        continue;
      }
      this.up();
      const value = received.result.value;
      if ('searchedThrough' in value) {
        // Nothing up to there is left to deliver: a resubscription starts after it, not back at the last event.
        this.lastDelivered = Math.max(this.lastDelivered ?? -1, toPositionNumber(value.searchedThrough));
        continue;
      }
      const event = toDomainEvent(value);
      if (event && (this.lastDelivered === undefined || event.position > this.lastDelivered)) {
        this.lastDelivered = event.position;
        return { done: false, value: event };
      }
    }
    return DONE;
  }

  private receive(): Promise<Received> {
    return this.events.next().then(
      (result) => ({ result }),
      (error: unknown) => ({ error: error instanceof Error ? error : new Error(String(error)) }),
    );
  }

  /** Resubscribes after the last delivered position, waiting longer after each failed attempt. */
  private async resume(cause: Error): Promise<void> {
    const from = this.lastDelivered === undefined ? 'the start of the log' : `position ${this.lastDelivered}`;
    this.fault = `the subscription to the event log dropped (${oneLine(cause.message)}); resubscribing from ${from}`;
    this.policy.onDrop?.(this.fault, this.lastDelivered);
    await this.discard(this.source);
    const delay = Math.min(this.policy.maxDelayMs, this.policy.initialDelayMs * 2 ** this.failedAttempts);
    this.failedAttempts += 1;
    // Jitter spreads the instances that lost the same server over the wait.
    await this.sleep(delay * (0.5 + Math.random() / 2));
    if (this.closed) return;
    try {
      this.source = this.attach(this.open(this.lastDelivered));
      this.events = this.source[Symbol.asyncIterator]();
    } catch (error) {
      // Opening failed at once: the next receive() reports it and the wait grows.
      const failure = error instanceof Error ? error : new Error(String(error));
      this.events = { next: () => Promise.reject(failure) };
    }
  }

  private attach(source: SubscriptionSource): SubscriptionSource {
    source.once?.('confirmation', () => {
      if (source === this.source) this.up();
    });
    return source;
  }

  private up(): void {
    this.fault = null;
    this.failedAttempts = 0;
  }

  private async discard(source: SubscriptionSource): Promise<void> {
    try {
      await source.unsubscribe();
    } catch {
      // A dropped call may refuse to be cancelled again: it is gone either way.
    }
    source.destroy?.();
  }

  /** Waits `ms`, or less when the subscription is closed meanwhile (no timer outlives it). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakeOnClose.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakeOnClose.add(wake);
    });
  }

  /** The promise's value, or CLOSED as soon as close() runs; nothing outlives the wait. */
  private async untilClosed<T>(promise: Promise<T>): Promise<T | typeof CLOSED> {
    if (this.closed) return CLOSED;
    let wake: () => void = () => undefined;
    const closed = new Promise<typeof CLOSED>((resolve) => {
      wake = () => resolve(CLOSED);
    });
    this.wakeOnClose.add(wake);
    try {
      return await Promise.race([promise, closed]);
    } finally {
      this.wakeOnClose.delete(wake);
    }
  }
}
