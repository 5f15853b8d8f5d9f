import type { RecordedEvent } from '../event-store/event-store.port';
import { documentProjection } from './projection';
import { MemoryReadStore } from '../read-store/memory/memory-read-store';
import type { Document } from '../read-store/read-store.port';

type Counter = Document & { count: number; seen: number[] };

function event(position: number, data: Record<string, unknown> = { counter: 'c1' }): RecordedEvent {
  return {
    id: `e${position}`,
    position,
    streamName: 'counter-c1',
    revision: position - 1,
    type: 'Counted',
    data,
    metadata: { organization: 'acme', actor: 'test', correlationId: 'c', causationId: 'c' },
    createdAt: new Date(0).toISOString(),
  };
}

function counter(evolve: (document: Counter | null, event: RecordedEvent, id: string) => Counter | null) {
  return documentProjection<Counter>({ name: 'counter', collection: 'counters', eventTypes: ['Counted'], documentId: () => 'c1', evolve });
}

/**
 * The in-memory store hands a projection its stored document, not a copy, and stores what the
 * projection answers as it is: evolve must be pure. The store the tests rebuild read models with
 * (`freezeHanded`) makes an impure evolve throw, rather than change stored documents unseen.
 */
describe('document projections into the in-memory store', () => {
  const pure = counter((document) => ({ _id: 'c1', count: (document?.count ?? 0) + 1, seen: [...(document?.seen ?? []), 1] }));

  it('store a pure evolve answer, completed with _id and _position, and skip what they already reflect', async () => {
    const store = new MemoryReadStore({ freezeHanded: true });
    for (const position of [1, 2, 2, 1, 3]) await pure.project(event(position), store);
    expect(await store.collection('counters').find({})).toEqual([{ _id: 'c1', count: 3, seen: [1, 1, 1], _position: 3 }]);
  });

  it('copy the stored document when evolve answers it unchanged, moving only its position', async () => {
    const store = new MemoryReadStore({ freezeHanded: true });
    await pure.project(event(1), store);
    const unchanged = counter((document) => document);
    await unchanged.project(event(2), store);
    expect(await store.collection('counters').findOne({ _id: 'c1' })).toEqual({ _id: 'c1', count: 1, seen: [1], _position: 2 });
  });

  it('make an evolve that changes the document it was given throw, leaving the stored one as it was', async () => {
    const store = new MemoryReadStore({ freezeHanded: true });
    await pure.project(event(1), store);
    const mutating = counter((document) => {
      if (document) document.seen.push(2);
      return document && { ...document, count: document.count + 1 };
    });
    expect(() => mutating.project(event(2), store)).toThrow(TypeError);
    expect(await store.collection('counters').findOne({ _id: 'c1' })).toEqual({ _id: 'c1', count: 1, seen: [1], _position: 1 });
  });

  it('make an evolve that answers part of the event as its new document throw', () => {
    const store = new MemoryReadStore({ freezeHanded: true });
    const borrowing = counter((_, recorded) => recorded.data as Counter);
    expect(() => borrowing.project(event(1, { counter: 'c1', count: 1, seen: [] }), store)).toThrow(TypeError);
  });
});
