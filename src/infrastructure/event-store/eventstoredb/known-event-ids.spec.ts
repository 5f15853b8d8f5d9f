import { randomUUID } from 'node:crypto';
import { IdempotencyViolation, NewEvent, RecordedEvent } from '../event-store.port';
import { KnownEventIds } from './known-event-ids';

const metadata = { organization: 'org', actor: 'system:test', correlationId: 'c', causationId: 'c' };

/** A stand-in for EventStoreDB's streams: what the adapter reads back, and how much it read. */
class Streams {
  readonly byStream = new Map<string, RecordedEvent[]>();
  eventsRead = 0;
  private position = 0;

  append(stream: string, events: NewEvent[]): void {
    const stored = this.byStream.get(stream) ?? [];
    for (const event of events) {
      stored.push({ ...event, streamName: stream, revision: stored.length, position: ++this.position, createdAt: new Date(0).toISOString() });
    }
    this.byStream.set(stream, stored);
  }

  readTail = async (stream: string, fromRevision: number): Promise<RecordedEvent[]> => {
    const tail = (this.byStream.get(stream) ?? []).slice(fromRevision);
    this.eventsRead += tail.length;
    return tail;
  };
}

function newEvents(count: number): NewEvent[] {
  return Array.from({ length: count }, () => ({ id: randomUUID(), type: 'SampleRecorded', data: {}, metadata }));
}

describe('the event ids the EventStoreDB adapter checks before each append', () => {
  it('recognises a retry however many events came after it, reading only the tail after the first look', async () => {
    const streams = new Streams();
    const known = new KnownEventIds(streams.readTail);
    const batch = newEvents(2);
    expect(await known.earlierAppend('s', batch)).toBeUndefined();
    streams.append('s', batch);
    for (let round = 0; round < 10; round++) {
      const more = newEvents(100);
      expect(await known.earlierAppend('s', more)).toBeUndefined();
      streams.append('s', more);
    }
    const readBefore = streams.eventsRead;
    expect(await known.earlierAppend('s', batch)).toEqual({ nextExpectedRevision: 1, position: 2 });
    // Only the last 100 events were new since the previous look.
    expect(streams.eventsRead - readBefore).toBe(100);
    await expect(known.earlierAppend('s', [batch[0], ...newEvents(1)])).rejects.toBeInstanceOf(IdempotencyViolation);
  });

  it('sees ids appended by another instance since its last look', async () => {
    const streams = new Streams();
    const known = new KnownEventIds(streams.readTail);
    expect(await known.earlierAppend('s', newEvents(1))).toBeUndefined();
    const elsewhere = newEvents(3);
    streams.append('s', elsewhere);
    expect(await known.earlierAppend('s', elsewhere)).toEqual({ nextExpectedRevision: 2, position: 3 });
  });

  it('stays exact beyond its limit, forgetting the least recently used streams and reading them whole again', async () => {
    const streams = new Streams();
    const known = new KnownEventIds(streams.readTail, 250);
    const first = newEvents(100);
    streams.append('a', first);
    await known.earlierAppend('a', newEvents(1));
    for (const stream of ['b', 'c']) {
      streams.append(stream, newEvents(100));
      await known.earlierAppend(stream, newEvents(1));
    }
    expect(known.size).toBeLessThanOrEqual(250);
    const readBefore = streams.eventsRead;
    expect(await known.earlierAppend('a', first)).toEqual({ nextExpectedRevision: 99, position: 100 });
    expect(streams.eventsRead - readBefore).toBe(100);
    // A stream larger than the limit on its own is answered, then not kept.
    streams.append('huge', newEvents(300));
    const huge = streams.byStream.get('huge')?.slice(0, 1) ?? [];
    expect(await known.earlierAppend('huge', huge)).toEqual({ nextExpectedRevision: 0, position: huge[0].position });
    expect(known.size).toBeLessThanOrEqual(250);
  });

  it('answers from the ids it holds what it appended itself, without a read, at a revision they cover', async () => {
    const streams = new Streams();
    const known = new KnownEventIds(streams.readTail);
    const first = newEvents(2);
    expect(known.heldAnswer('s-1', first, -1)).toBeUndefined();
    streams.append('s-1', first);
    known.remember('s-1', 0, first, 2);
    expect(known.heldAnswer('s-1', first, 1)).toEqual({ nextExpectedRevision: 1, position: 2 });
    expect(known.heldAnswer('s-1', newEvents(1), 1)).toBeNull();
    // Beyond what it holds: another instance may have appended since.
    expect(known.heldAnswer('s-1', newEvents(1), 2)).toBeUndefined();
    // The first event alone: the server reported the last one's position only, so a read tells.
    expect(known.heldAnswer('s-1', [first[0]], 1)).toBeUndefined();
    expect(await known.earlierAppend('s-1', [first[0]])).toEqual({ nextExpectedRevision: 0, position: 1 });
    expect(streams.eventsRead).toBe(2);
    // What does not continue what it holds is not held.
    known.remember('s-2', 3, newEvents(1), 9);
    expect(known.heldAnswer('s-2', newEvents(1), 3)).toBeUndefined();
  });
});
