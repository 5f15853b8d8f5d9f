/**
 * Instances of the service's projection machinery sharing one read store and one SQLite log, as
 * several servers sharing one MongoDB do: each with its own log connection, its own election and
 * its own projections (which note the positions they applied, to show who applied what).
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { EventStore, RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { documentProjection, Projection } from '#infrastructure/processing/projection';
import { ProjectionElection } from '#infrastructure/processing/projection-election';
import { PROJECTION_LEASES } from '#infrastructure/processing/projection-lease';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { Document, DuplicateKey, ReadStore } from '#infrastructure/read-store/read-store.port';

export const THINGS = ['tallies', 'notes'];

/**
 * Two projections: a count with `$inc` (applied twice, it would count twice: a write only lands
 * when the event is past the document's position, and `applied` notes each one that landed) and
 * a document per note through documentProjection.
 */
export function thingProjections(applied: number[]): Projection[] {
  const tally: Projection = {
    name: 'tally',
    eventTypes: ['ThingHappened'],
    collections: { tallies: [] },
    async project(event, store) {
      try {
        const filter = { _id: 'things', _position: { $lt: event.position } };
        await store.collection('tallies').updateOne(filter, { $inc: { count: 1 }, $set: { _position: event.position } }, { upsert: true });
        applied.push(event.position);
      } catch (error) {
        // Already past this event: a redelivery.
        if (!(error instanceof DuplicateKey)) throw error;
      }
    },
  };
  const notes = documentProjection<Document & { note: string; times: number }>({
    name: 'notes',
    collection: 'notes',
    eventTypes: ['ThingHappened'],
    documentId: (event: RecordedEvent) => (event.data as { note: string }).note,
    evolve: (document, _event, id) => ({ _id: id, note: id, times: (document?.times ?? 0) + 1 }),
  });
  return [tally, notes];
}

export interface Instance {
  id: string;
  eventStore: EventStore;
  runner: ProjectionRunner;
  election: ProjectionElection;
  applied: number[];
  lines: string[];
  /** Cuts this instance off the lease collection (its renewals fail), or restores it. */
  partition(cut: boolean): void;
  logged(message: string): boolean;
}

export function logFile(dir: string): string {
  return path.join(dir, 'events.sqlite');
}

export function instance(id: string, dir: string, store: ReadStore, leaseMs: number, clock?: () => number): Instance {
  const eventStore = new SqliteEventStore(logFile(dir));
  const applied: number[] = [];
  const lines: string[] = [];
  const cut = { now: false };
  const logger = new JsonLogger('debug', (line) => lines.push(line));
  const settings = { instanceId: id, leaseMs, followEveryMs: 20, clock };
  const { runner, election } = ProjectionElection.create(eventStore, partitionable(store, cut), thingProjections(applied), settings, logger);
  return {
    id,
    eventStore,
    runner,
    election,
    applied,
    lines,
    partition: (value) => (cut.now = value),
    logged: (message) => lines.some((line) => (JSON.parse(line) as { msg: string }).msg === message),
  };
}

/** The store, with the lease collection's calls failing while `cut.now`: a network partition from the lease alone. */
function partitionable(store: ReadStore, cut: { now: boolean }): ReadStore {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (property !== 'collection') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return (name: string) => {
        const collection = target.collection(name);
        if (name !== PROJECTION_LEASES) return collection;
        return new Proxy(collection, {
          get(inner, method) {
            const member: unknown = Reflect.get(inner, method);
            if (typeof member !== 'function') return member;
            return (...args: unknown[]) =>
              cut.now ? Promise.reject(new Error('the lease collection is unreachable')) : (member as (...a: unknown[]) => unknown).apply(inner, args);
          },
        });
      };
    },
  });
}

/** Appends one ThingHappened about `note`; its log position. */
export async function happen(eventStore: EventStore, note: string): Promise<number> {
  const id = randomUUID();
  const metadata = { organization: 'acme', actor: 'system:test', correlationId: id, causationId: id };
  const result = await eventStore.append(`thing-${id}`, [{ id, type: 'ThingHappened', data: { note }, metadata }], 'no_stream');
  return result.position;
}

/** The things' documents as a replay of the whole log from scratch makes them. */
export async function rebuiltThings(eventStore: EventStore): Promise<Record<string, Document[]>> {
  const store = new MemoryReadStore();
  const runner = new ProjectionRunner(eventStore, store, thingProjections([]), new JsonLogger('silent'));
  await runner.start();
  await runner.stop();
  return things(store);
}

export async function things(store: ReadStore): Promise<Record<string, Document[]>> {
  const result: Record<string, Document[]> = {};
  for (const name of THINGS) result[name] = await store.collection(name).find({}, { sort: { _id: 1 } });
  return result;
}
