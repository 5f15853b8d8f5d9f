/**
 * What keeps the read store's costs from growing with its size, on every adapter: an ordered
 * bulkWrite (a replay's writes in one round trip a batch), tombstones that keep a deletion's
 * position (so a lapsed writer cannot bring a deleted document back), and a replay that sends
 * its writes in bulks and ends in the documents the one-write-at-a-time path makes.
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { documentProjection, LIVE, Projection } from '#infrastructure/processing/projection';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { REPLAY_BATCH } from '#infrastructure/processing/batched-replay';
import { Collection, Document, DuplicateKey, ReadStore } from '#infrastructure/read-store/read-store.port';
import { tempDir } from '../support/temp-dirs';
import { OpenedReadStore, signal, slowWriteAt, withoutEvolveOne } from './read-store.contract';

const unique = (label: string) => `costs_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;

/** Notes written and erased: a note's document goes when it is erased, and comes back when written again. */
function noteProjection(collection: string, name = 'notes'): Projection {
  return documentProjection<Document & { text: string; times: number }>({
    name,
    collection,
    eventTypes: ['NoteWritten', 'NoteErased'],
    documentId: (event) => (event.data as { note: string }).note,
    evolve: (document, event, id) => (event.type === 'NoteErased' ? null : { _id: id, text: id, times: (document?.times ?? 0) + 1 }),
  });
}

function noteEvent(position: number, type: 'NoteWritten' | 'NoteErased', note: string): RecordedEvent {
  const metadata = { organization: 'acme', actor: 'contract', correlationId: 'contract', causationId: 'contract' };
  return { id: `e${position}`, position, streamName: `note-${note}`, revision: 0, type, data: { note }, metadata, createdAt: new Date(0).toISOString() };
}

/** The store, counting the calls each collection method gets. */
export function counting(store: ReadStore, calls: Map<string, number>): ReadStore {
  const wrap = (collection: Collection): Collection =>
    new Proxy(collection, {
      get(target, property: keyof Collection) {
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.set(property, (calls.get(property) ?? 0) + 1);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return new Proxy(store, {
    get(target, property: keyof ReadStore) {
      if (property === 'collection') return (name: string) => wrap(target.collection(name));
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export function readStoreCostsContract(adapterName: string, open: () => Promise<OpenedReadStore>): void {
  describe(`ReadStore contract, costs at scale: ${adapterName}`, () => {
    let opened: OpenedReadStore;
    beforeAll(async () => {
      opened = await open();
    });
    afterAll(() => opened.cleanup());
    const documents = (store: ReadStore, collection: string) => store.collection(collection).find({}, { sort: { _id: 1 } });

    it('bulkWrite applies its writes in order, and answers how many applied to a document', async () => {
      const notes = opened.store.collection(unique('bulk'));
      const applied = await notes.bulkWrite([
        { insertOne: { document: { _id: 'a', _position: 1, text: 'a' } } },
        { insertOne: { document: { _id: 'b', _position: 2 } } },
        { replaceOne: { filter: { _id: 'a', _position: 1 }, replacement: { _id: 'a', _position: 3, text: 'A' } } },
        // Guarded by a position the document has moved past: applies to nothing.
        { replaceOne: { filter: { _id: 'a', _position: 1 }, replacement: { _id: 'a', _position: 4, text: 'stale' } } },
        { deleteOne: { filter: { _id: 'b', _position: 2 } } },
      ]);
      expect(applied).toBe(4);
      expect(await documents(opened.store, notes.name)).toEqual([{ _id: 'a', _position: 3, text: 'A' }]);
      expect(await notes.bulkWrite([])).toBe(0);
    });

    it('bulkWrite stops at a duplicate _id, keeping the writes before it', async () => {
      const notes = opened.store.collection(unique('bulk_dup'));
      await notes.insertOne({ _id: 'a', _position: 1 });
      const bulk = notes.bulkWrite([
        { insertOne: { document: { _id: 'b', _position: 2 } } },
        { insertOne: { document: { _id: 'a', _position: 3 } } },
        { insertOne: { document: { _id: 'c', _position: 4 } } },
      ]);
      await expect(bulk).rejects.toBeInstanceOf(DuplicateKey);
      expect(await documents(opened.store, notes.name)).toEqual([
        { _id: 'a', _position: 1 },
        { _id: 'b', _position: 2 },
      ]);
    });

    it('a lapsed writer whose first write of a document was in flight does not bring it back once deleted', async () => {
      const collection = unique('tomb');
      const events = [noteEvent(1, 'NoteWritten', 'n'), noteEvent(2, 'NoteWritten', 'n'), noteEvent(3, 'NoteErased', 'n'), noteEvent(4, 'NoteWritten', 'm')];
      const projection = noteProjection(collection);
      const apply = async (store: ReadStore, slice: RecordedEvent[]) => {
        for (const event of slice) await projection.project(event, store);
      };
      const alone = `${collection}_alone`;
      for (const event of events) await noteProjection(alone).project(event, withoutEvolveOne(opened.store));

      const [reached, release, written, resume] = [signal(), signal(), signal(), signal()];
      const slow = slowWriteAt(opened.store, 1, { reached: reached.settle, release: release.promise, written: written.settle, resume: resume.promise });
      // The lapsed writer read nothing there, and its insert of the first event waits.
      const lapsed = apply(slow, events);
      await reached.promise;
      // Meanwhile the new owner writes the note, erases it, and goes on.
      await apply(withoutEvolveOne(opened.store), events);
      release.settle();
      await written.promise;
      resume.settle();
      await lapsed;

      const notes = opened.store.collection(collection);
      expect(await notes.find({ ...LIVE, text: { $exists: true } }, { sort: { _id: 1 } })).toEqual([{ _id: 'm', _position: 4, text: 'm', times: 1 }]);
      expect(await documents(opened.store, collection)).toEqual(await documents(opened.store, alone));
      // The erased note is kept as its tombstone, with the position that erased it.
      expect(await notes.findOne({ _id: 'n' })).toEqual({ _id: 'n', _position: 3, _deleted: true });
    });

    it('a note written again after its erasure comes back, over its tombstone', async () => {
      const collection = unique('tomb_again');
      const projection = noteProjection(collection);
      const store = withoutEvolveOne(opened.store);
      for (const event of [noteEvent(1, 'NoteWritten', 'n'), noteEvent(2, 'NoteErased', 'n'), noteEvent(3, 'NoteWritten', 'n')])
        await projection.project(event, store);
      expect(await documents(opened.store, collection)).toEqual([{ _id: 'n', _position: 3, text: 'n', times: 1 }]);
    });

    it('a batched replay sends its writes in ordered bulks and ends in the documents of one write at a time', async () => {
      const dir = tempDir('assay-batched-replay-');
      const log = new SqliteEventStore(path.join(dir, 'events.sqlite'));
      try {
        const notes = Array.from({ length: REPLAY_BATCH + 150 }, (_, index) => `n${index % (REPLAY_BATCH + 50)}`);
        for (const [index, note] of notes.entries()) {
          const type = index % 7 === 6 ? 'NoteErased' : 'NoteWritten';
          const metadata = { organization: 'acme', actor: 'contract', correlationId: `c${index}`, causationId: `c${index}` };
          await log.append(`note-${index}`, [{ id: randomUUID(), type, data: { note }, metadata }], 'no_stream');
        }
        const [batched, single] = [unique('batched'), unique('single')];
        const calls = new Map<string, number>();
        const replay = async (store: ReadStore, collection: string, batchedCatchUp: boolean) => {
          const runner = new ProjectionRunner(log, store, [noteProjection(collection)], new JsonLogger('silent'), `costs/${collection}`, { batchedCatchUp });
          await runner.start();
          await runner.stop();
        };
        await replay(counting(withoutEvolveOne(opened.store), calls), batched, true);
        await replay(withoutEvolveOne(opened.store), single, false);
        expect(await documents(opened.store, batched)).toEqual(await documents(opened.store, single));
        // No document went on a round trip of its own: two bulks for the notes, the checkpoints apart.
        expect([calls.get('insertOne') ?? 0, calls.get('replaceOne') ?? 0, calls.get('deleteOne') ?? 0]).toEqual([0, 0, 0]);
        expect(calls.get('bulkWrite')).toBe(2);
      } finally {
        await log.close();
      }
    }, 180_000);

    it('a first catch-up into collections nobody projected into is batched, also for a projection an upgrade adds; once checkpointed, each write goes alone', async () => {
      const dir = tempDir('assay-fresh-catch-up-');
      const log = new SqliteEventStore(path.join(dir, 'events.sqlite'));
      const metadata = (index: number) => ({ organization: 'acme', actor: 'contract', correlationId: `c${index}`, causationId: `c${index}` });
      const write = (index: number, note: string) =>
        log.append(`note-${index}`, [{ id: randomUUID(), type: 'NoteWritten', data: { note }, metadata: metadata(index) }], 'no_stream');
      try {
        for (let index = 0; index < 40; index++) await write(index, `n${index % 30}`);
        const collection = unique('fresh');
        const catchUp = async (projections = [noteProjection(collection)]) => {
          const calls = new Map<string, number>();
          const store = counting(withoutEvolveOne(opened.store), calls);
          const runner = new ProjectionRunner(log, store, projections, new JsonLogger('silent'), `costs/${collection}`);
          await runner.start();
          await runner.stop();
          return [calls.get('bulkWrite') ?? 0, (calls.get('insertOne') ?? 0) + (calls.get('replaceOne') ?? 0)];
        };
        // Empty, no checkpoint: one bulk for the 30 notes, none on a round trip of its own.
        expect(await catchUp()).toEqual([1, 0]);
        const times = Object.fromEntries((await documents(opened.store, collection)).map((note) => [note._id, note.times]));
        expect(times).toEqual(Object.fromEntries(Array.from({ length: 30 }, (_, note) => [`n${note}`, note < 10 ? 2 : 1])));
        // Its checkpoint stored: a later start shares the collection with whoever wrote it, so it writes one document at a time.
        await write(40, 'n40');
        expect(await catchUp()).toEqual([0, 1]);
        // An upgrade adds a projection with a collection of its own: its replay goes in one bulk, the other has nothing new.
        const added = unique('added');
        expect(await catchUp([noteProjection(collection), noteProjection(added, 'notes-added')])).toEqual([1, 0]);
        expect(await documents(opened.store, added)).toHaveLength(31);
      } finally {
        await log.close();
      }
    }, 180_000);
  });
}
