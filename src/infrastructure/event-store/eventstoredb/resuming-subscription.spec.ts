/**
 * The EventStoreDB subscription loop, with the client's stream stubbed (an async iterable of
 * resolved events, as @eventstore/db-client's subscribeToAll yields them): it must hold no event
 * it has delivered, and must resume a dropped subscription with no event lost or repeated.
 */
import { randomBytes } from 'node:crypto';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import type { AllStreamResolvedEvent } from '@eventstore/db-client';
import type { RecordedEvent } from '../event-store.port';
import { ResumingAllSubscription, SubscriptionSource } from './resuming-subscription';

const metadata = { organization: 'org', actor: 'system:test', correlationId: 'c', causationId: 'c' };

/** An event of `$all` at `position`, carrying about 1 KB of its own data. */
function resolved(position: number, payloadBytes = 0): AllStreamResolvedEvent {
  const payload = payloadBytes > 0 ? randomBytes(payloadBytes / 2).toString('hex') : '';
  return {
    event: {
      streamId: `trial-${position % 7}`,
      id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
      revision: BigInt(position),
      type: 'SampleRecorded',
      data: { payload },
      metadata,
      isJson: true,
      created: new Date(0),
      position: { commit: BigInt(position), prepare: BigInt(position) },
      contentType: 'application/json',
    },
    commitPosition: BigInt(position),
  } as AllStreamResolvedEvent;
}

/**
 * A stub of the client's subscription over a generator, which gets the promise of the
 * unsubscribe to end a read it keeps pending (only the last read waits on it, so it holds nothing).
 */
function stubSource(produce: (unsubscribed: Promise<void>) => AsyncGenerator<AllStreamResolvedEvent>): SubscriptionSource & { unsubscribed: boolean } {
  let stop: () => void = () => undefined;
  const unsubscribed = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const source = {
    unsubscribed: false,
    async unsubscribe() {
      source.unsubscribed = true;
      stop();
    },
    destroy: () => undefined,
    [Symbol.asyncIterator]() {
      const events = produce(unsubscribed);
      return { next: () => (source.unsubscribed ? Promise.resolve({ done: true as const, value: undefined }) : events.next()) };
    },
  };
  return source;
}

/** Yields nothing until unsubscribed: a live subscription with nothing new. */
async function* idle(unsubscribed: Promise<void>): AsyncGenerator<AllStreamResolvedEvent> {
  await unsubscribed;
  yield* [];
}

function heapAfterGc(): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('the EventStoreDB subscription loop', () => {
  it('holds no delivered event: 200k events of 1 KB leave the heap where it was after the first 20k', async () => {
    const total = 200_000;
    async function* events(unsubscribed: Promise<void>) {
      for (let position = 1; position <= total; position++) yield resolved(position, 1024);
      yield* idle(unsubscribed);
    }
    const subscription = new ResumingAllSubscription(
      () => stubSource(events),
      undefined,
      () => undefined,
    );
    const iterator = subscription[Symbol.asyncIterator]();
    let delivered = 0;
    let last = 0;
    let baseline = 0;
    while (delivered < total) {
      const next = await iterator.next();
      if (next.done) throw new Error('the subscription ended early');
      // One expect per event would cost more than the loop itself.
      if (next.value.position !== last + 1) throw new Error(`position ${next.value.position} after ${last}`);
      last = next.value.position;
      delivered += 1;
      if (delivered === 20_000) baseline = heapAfterGc();
    }
    const grown = heapAfterGc() - baseline;
    await subscription.close();
    expect(delivered).toBe(total);
    process.stderr.write(`heap growth over 180k events of 1 KB: ${(grown / 1024 / 1024).toFixed(1)} MB\n`);
    // Racing every read against one long-lived promise held each event: about 200 MB here.
    expect(grown).toBeLessThan(24 * 1024 * 1024);
  }, 120_000);

  it('resubscribes after the last delivered position when the stream fails, losing and repeating nothing', async () => {
    const opened: Array<number | undefined> = [];
    const drops: string[] = [];
    const faultsSeen: Array<string | null> = [];
    let attempt = 0;
    const open = (after: number | undefined) => {
      opened.push(after);
      attempt += 1;
      if (attempt === 1) {
        return stubSource(async function* () {
          for (let position = 1; position <= 5; position++) yield resolved(position);
          throw new Error('14 UNAVAILABLE: Connection dropped');
        });
      }
      if (attempt === 2) throw new Error('14 UNAVAILABLE: No connection established');
      if (attempt === 3) {
        // The server ended the call without an error: also a drop, since only close() ends it.
        return stubSource(async function* () {
          yield resolved(5); // at the resume position: must not be delivered again
          yield resolved(6);
        });
      }
      return stubSource(async function* (unsubscribed) {
        for (let position = 6; position <= 10; position++) yield resolved(position);
        yield* idle(unsubscribed);
      });
    };
    const subscription: ResumingAllSubscription = new ResumingAllSubscription(open, undefined, () => undefined, {
      initialDelayMs: 1,
      maxDelayMs: 4,
      onDrop: (reason) => {
        drops.push(reason);
        faultsSeen.push(subscription.fault);
      },
    });
    const received: RecordedEvent[] = [];
    for await (const event of subscription) {
      received.push(event);
      if (received.length === 10) break;
    }
    expect(received.map((event) => event.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(opened).toEqual([undefined, 5, 5, 6]);
    expect(drops).toHaveLength(3);
    expect(drops[0]).toContain('Connection dropped');
    expect(drops[0]).toContain('resubscribing from position 5');
    expect(drops[2]).toContain('the server ended the subscription');
    expect(faultsSeen.every((fault) => fault !== null)).toBe(true);
    // Receiving again clears the fault.
    expect(subscription.fault).toBeNull();
  });

  it('says it is down while it waits to resubscribe, and a close during the wait ends it at once', async () => {
    const drops: string[] = [];
    const subscription = new ResumingAllSubscription(
      () =>
        stubSource(async function* () {
          yield resolved(1);
          throw new Error('14 UNAVAILABLE: Connection refused');
        }),
      undefined,
      () => undefined,
      { initialDelayMs: 600_000, maxDelayMs: 600_000, onDrop: (reason) => drops.push(reason) },
    );
    const iterator = subscription[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ position: 1 });
    const pending = iterator.next();
    while (drops.length === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(subscription.fault).toContain('Connection refused');
    await subscription.close();
    // A ten-minute backoff is pending: only the close can end the read within the test's timeout.
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('skips system events and unresolved links without moving its position', async () => {
    const systemEvent = resolved(2);
    (systemEvent.event as { streamId: string }).streamId = '$stats-127.0.0.1:2113';
    const link = { event: undefined, link: resolved(3).event, commitPosition: 3n } as unknown as AllStreamResolvedEvent;
    const subscription = new ResumingAllSubscription(
      () =>
        stubSource(async function* (unsubscribed) {
          yield resolved(1);
          yield systemEvent;
          yield link;
          yield resolved(4);
          yield* idle(unsubscribed);
        }),
      undefined,
      () => undefined,
    );
    const iterator = subscription[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ position: 1 });
    expect((await iterator.next()).value).toMatchObject({ position: 4 });
    await subscription.close();
  });

  it("resubscribes after what the server's filter searched, not back at the last event it delivered", async () => {
    const opened: Array<number | undefined> = [];
    const subscription = new ResumingAllSubscription(
      (after) => {
        opened.push(after);
        if (opened.length > 1) return stubSource(idle);
        return stubSource(async function* () {
          yield resolved(1);
          yield { searchedThrough: { commit: 500n, prepare: 500n } } as unknown as AllStreamResolvedEvent;
          throw new Error('14 UNAVAILABLE: Connection dropped');
        });
      },
      undefined,
      () => undefined,
      { initialDelayMs: 1, maxDelayMs: 1 },
    );
    const iterator = subscription[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ position: 1 });
    const pending = iterator.next();
    while (opened.length < 2) await new Promise((resolve) => setImmediate(resolve));
    expect(opened).toEqual([undefined, 500]);
    expect(subscription.resumesAfter).toBe(500);
    await subscription.close();
    expect(await pending).toEqual({ done: true, value: undefined });
  });
});
