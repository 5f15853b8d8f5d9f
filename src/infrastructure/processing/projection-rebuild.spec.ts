/**
 * The rebuild's swap is fenced: once the rebuild's hold on the projection lease lapses (its
 * renewals failing), it renames nothing more, so it can never swap collections under a new owner.
 */
import * as path from 'node:path';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { happen, thingProjections } from '../../../test/support/shared-read-store';
import { tempDir } from '../../../test/support/temp-dirs';
import { PROJECTION_LEASES } from './projection-lease';
import { rebuildAndSwap } from './projection-rebuild';

const LEASE_MS = 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The store with slow renames, and the lease collection cut off (its calls failing) from the first rename on. */
function slowSwapAndCutLease(store: ReadStore, renamed: string[]): ReadStore {
  const cut = { now: false };
  return new Proxy(store, {
    get(target, property: keyof ReadStore) {
      if (property === 'renameCollection') {
        return async (from: string, to: string) => {
          cut.now = true;
          await sleep(LEASE_MS);
          await target.renameCollection(from, to);
          renamed.push(to);
        };
      }
      if (property === 'collection') {
        return (name: string) => {
          const collection = target.collection(name);
          if (name !== PROJECTION_LEASES) return collection;
          return new Proxy(collection, {
            get: (inner, method: string) => {
              const member: unknown = Reflect.get(inner, method);
              if (typeof member !== 'function') return member;
              return (...args: unknown[]) =>
                cut.now ? Promise.reject(new Error('the lease collection is unreachable')) : (member as (...a: unknown[]) => unknown).apply(inner, args);
            },
          });
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

it('stops swapping once its hold on the lease lapsed: the collections not yet renamed stay as they were', async () => {
  const eventStore = new SqliteEventStore(path.join(tempDir('assay-rebuild-'), 'events.sqlite'));
  const store = new MemoryReadStore();
  try {
    for (let index = 0; index < 6; index += 1) await happen(eventStore, `n${index % 2}`);
    const renamed: string[] = [];
    const rebuild = rebuildAndSwap(
      eventStore,
      slowSwapAndCutLease(store, renamed),
      thingProjections([]),
      { leaseMs: LEASE_MS, pollMs: 20 },
      new JsonLogger('silent'),
    );
    await expect(rebuild).rejects.toThrow('no longer holds the projection lease');
    // The rename under way when the hold lapsed went through; none began after it.
    expect(renamed).toEqual(['notes']);
    expect(await store.collection('tallies').count({})).toBe(0);
  } finally {
    await eventStore.close();
    await store.close();
  }
});
