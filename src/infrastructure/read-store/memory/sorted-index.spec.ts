import 'reflect-metadata';
import { MemoryReadStore } from './memory-read-store';
import { SortedIndex } from './sorted-index';
import type { Collection, Document, Filter } from '../read-store.port';
import { afterCursor } from '#modules/evals/shared/cursor';

interface Batch extends Document {
  organization: string;
  startedAtMillis: number | null;
  status: string;
}

/** A small deterministic generator, so a failure names a reproducible sequence. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const ORDER = [
  { field: 'startedAtMillis', direction: -1 },
  { field: '_id', direction: -1 },
] as const;

async function pages(batches: Collection<Batch>, organization: string, extra: Filter, limit: number): Promise<string[][]> {
  const result: string[][] = [];
  let cursor: Batch | null = null;
  for (;;) {
    const after: Filter = cursor
      ? afterCursor([
          { ...ORDER[0], value: cursor.startedAtMillis ?? 0 },
          { ...ORDER[1], value: cursor._id },
        ])
      : {};
    const page: Batch[] = await batches.find({ organization, ...extra, ...after }, { sort: { startedAtMillis: -1, _id: -1 }, limit });
    if (page.length === 0) return result;
    result.push(page.map((batch) => batch._id));
    cursor = page[page.length - 1];
  }
}

describe('the memory read store sorted index', () => {
  it('pages in the same order as a scan and a sort, through inserts, updates and deletes', async () => {
    const indexed = new MemoryReadStore();
    const scanned = new MemoryReadStore();
    await indexed.ensureIndexes('batches', [{ keys: { organization: 1, startedAtMillis: -1, _id: -1 } }]);
    const a = indexed.collection<Batch>('batches');
    const b = scanned.collection<Batch>('batches');
    const next = random(7);
    const write = async (operation: (collection: Collection<Batch>) => Promise<unknown>) => {
      await operation(a);
      await operation(b);
    };
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 150; i++) {
        const id = `b-${Math.floor(next() * 400)}`;
        const doc: Batch = {
          _id: id,
          organization: next() < 0.7 ? 'acme' : 'other',
          // Few distinct times, so that ties on the first key are common and _id decides.
          startedAtMillis: Math.floor(next() * 20),
          status: next() < 0.5 ? 'running' : 'finished',
        };
        const choice = next();
        if (choice < 0.6) await write((c) => c.replaceOne({ _id: id }, doc, { upsert: true }));
        else if (choice < 0.85) await write((c) => c.updateOne({ _id: id }, { $set: { startedAtMillis: doc.startedAtMillis, status: doc.status } }));
        else await write((c) => c.deleteOne({ _id: id }));
      }
      for (const limit of [1, 3, 20]) {
        for (const extra of [{}, { status: 'running' }]) {
          const expected = await pages(b, 'acme', extra, limit);
          expect(await pages(a, 'acme', extra, limit)).toEqual(expected);
          expect(expected.flat().length).toBeGreaterThan(0);
        }
      }
      expect(await a.count({ organization: 'acme' })).toBe(await b.count({ organization: 'acme' }));
      expect(await a.count({ organization: 'nobody' })).toBe(0);
    }
  });

  it('starts a keyset page at its cursor by binary search and serves only its own order', () => {
    const index = new SortedIndex(['organization'], ORDER);
    const docs: Array<[Document, number]> = Array.from({ length: 1000 }, (_, i) => [
      { _id: `b-${String(i).padStart(4, '0')}`, organization: 'acme', startedAtMillis: i },
      i,
    ]);
    let visited = 0;
    const walk = index.walk(
      {
        organization: 'acme',
        ...afterCursor([
          { ...ORDER[0], value: 500 },
          { ...ORDER[1], value: 'b-0500' },
        ]),
      },
      { startedAtMillis: -1, _id: -1 },
      () => {
        visited += 1;
        return docs;
      },
    );
    expect(walk).not.toBeNull();
    const first = [...(walk ?? [])].slice(0, 3);
    expect(first).toEqual(['b-0499', 'b-0498', 'b-0497']);
    expect(visited).toBe(1);
    // Another order, or a filter that does not pin the partition, is not this index's to serve.
    expect(index.walk({ organization: 'acme' }, { startedAtMillis: 1, _id: 1 }, () => docs)).toBeNull();
    expect(index.walk({ organization: { $in: ['acme'] } }, { startedAtMillis: -1, _id: -1 }, () => docs)).toBeNull();
  });

  it('steps aside while a document holds an array in an indexed field, and the scan answers', async () => {
    const store = new MemoryReadStore();
    await store.ensureIndexes('batches', [{ keys: { organization: 1, startedAtMillis: -1, _id: -1 } }]);
    const batches = store.collection('batches');
    await batches.insertOne({ _id: 'a', organization: 'acme', startedAtMillis: 1 });
    await batches.insertOne({ _id: 'b', organization: 'acme', startedAtMillis: [0, 5] });
    await batches.insertOne({ _id: 'c', organization: 'acme', startedAtMillis: 3 });
    const found = await batches.find({ organization: 'acme' }, { sort: { startedAtMillis: -1, _id: -1 } });
    expect(found.map((doc) => doc._id)).toEqual(['b', 'c', 'a']);
  });
});
