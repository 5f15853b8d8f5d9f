import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { LIVE } from '#infrastructure/processing/projection';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { allProjections } from '../../src/projections';

/**
 * Every read-model document by collection (or of the collections named). The checkpoint is
 * bookkeeping, written lazily, and left out; so are tombstones, which keep a deleted document's
 * position where a store reads, then writes (MongoDB), and which the in-memory store never holds.
 */
export async function snapshot(store: ReadStore, collections?: readonly string[]): Promise<Record<string, unknown[]>> {
  const result: Record<string, unknown[]> = {};
  for (const name of collections ?? (await store.collectionNames()).sort()) {
    if (name === 'checkpoints') continue;
    result[name] = await store.collection(name).find(LIVE, { sort: { _id: 1 } });
  }
  return result;
}

/** Fresh read models from the whole log, as `assay projections rebuild` makes them. */
export async function rebuildFromLog(eventStore: EventStore): Promise<ReadStore> {
  // Frozen documents: a projection that changes the document it is given throws here.
  const rebuilt = new MemoryReadStore({ freezeHanded: true });
  const runner = new ProjectionRunner(eventStore, rebuilt, allProjections, new JsonLogger('silent'));
  await runner.start();
  await runner.stop();
  return rebuilt;
}

/** Read models from every event delivered twice, then the whole log once more: redelivery at its worst. */
export async function replayTwice(eventStore: EventStore): Promise<ReadStore> {
  const store = new MemoryReadStore({ freezeHanded: true });
  const runner = new ProjectionRunner(eventStore, store, allProjections, new JsonLogger('silent'));
  await runner.ensureIndexes();
  const events = await eventStore.readAll();
  for (const event of events) {
    await runner.handle(event);
    await runner.handle(event);
  }
  for (const event of events) await runner.handle(event);
  return store;
}
