/**
 * The MongoDB adapter's collection over a stubbed driver collection (no server runs here; the
 * read-store contract runs against a real one when MONGODB_URL is set): what it sends, and how it
 * rides out transient errors.
 */
import { Collection as DriverCollection, MongoNetworkError, MongoServerError } from 'mongodb';
import { DuplicateKey } from '../read-store.port';
import { MongoCollection } from './mongodb-read-store';
import { RetryPolicy } from './mongodb-retry';
import { indexKeys, totalOrder } from './mongodb-values';

const updated = { acknowledged: true, matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null };

function steppedDown(): MongoServerError {
  const error = new MongoServerError({ message: 'not primary', code: 10107, codeName: 'NotWritablePrimary' });
  error.addErrorLabel('RetryableWriteError');
  return error;
}

/** A driver collection whose calls are recorded and answered (or failed) from a script. */
function stubCollection(outcomes: Array<unknown>) {
  const calls: Array<{ method: string; args: unknown[] }> = [];
  const answer =
    (method: string) =>
    async (...args: unknown[]) => {
      calls.push({ method, args });
      const outcome = outcomes.shift();
      if (outcome instanceof Error) throw outcome;
      return outcome;
    };
  const cursor = (args: unknown[]) => {
    const call = { method: 'find', args, sort: undefined as unknown };
    calls.push(call);
    const chain = {
      sort: (sort: unknown) => ((call.sort = sort), chain),
      skip: () => chain,
      limit: () => chain,
      toArray: async () => [],
    };
    return chain;
  };
  const stub = {
    findOne: answer('findOne'),
    find: (...args: unknown[]) => cursor(args),
    countDocuments: answer('countDocuments'),
    insertOne: answer('insertOne'),
    replaceOne: answer('replaceOne'),
    updateOne: answer('updateOne'),
    updateMany: answer('updateMany'),
    deleteOne: answer('deleteOne'),
    deleteMany: answer('deleteMany'),
  };
  return { calls, collection: stub as unknown as DriverCollection };
}

function recordingPolicy(): RetryPolicy & { waits: number[] } {
  const waits: number[] = [];
  return { attempts: 5, initialDelayMs: 100, maxDelayMs: 1_000, waits, sleep: async (ms) => void waits.push(ms) };
}

describe('the MongoDB collection adapter', () => {
  it('retries a write that fails twice on transient errors, waiting longer each time, then succeeds', async () => {
    const { calls, collection } = stubCollection([steppedDown(), new MongoNetworkError('connection reset'), updated]);
    const policy = recordingPolicy();
    const runs = new MongoCollection('runs', collection, policy);
    expect(await runs.replaceOne({ _id: 'r1' }, { _id: 'r1', status: 'done' })).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
    expect(calls.map((call) => call.method)).toEqual(['replaceOne', 'replaceOne', 'replaceOne']);
    expect(policy.waits).toHaveLength(2);
    // Jittered between half and all of 100 ms, then of 200 ms.
    expect(policy.waits[0]).toBeGreaterThanOrEqual(50);
    expect(policy.waits[0]).toBeLessThanOrEqual(100);
    expect(policy.waits[1]).toBeGreaterThanOrEqual(100);
    expect(policy.waits[1]).toBeLessThanOrEqual(200);
  });

  it('with a guard (a projection owner), checks it before every attempt and bounds each attempt to its answer; a guard that throws stops the retries', async () => {
    const { calls, collection } = stubCollection([steppedDown(), updated]);
    const remaining = [900, 400];
    const guarded = new MongoCollection('runs', collection, recordingPolicy(), () => remaining.shift() ?? 0);
    await guarded.updateOne({ _id: 'r1' }, { $set: { status: 'done' } });
    expect(calls.map((call) => (call.args[2] as { timeoutMS?: number }).timeoutMS)).toEqual([900, 400]);

    // The hold lapses while the first attempt fails: the retry never reaches the server.
    const lapsing = stubCollection([new MongoNetworkError('connection reset'), updated]);
    let attempts = 0;
    const lapsed = new MongoCollection('runs', lapsing.collection, recordingPolicy(), () => {
      attempts += 1;
      if (attempts > 1) throw new Error('This instance no longer holds the projection lease: the lease was not renewed in time.');
      return 500;
    });
    await expect(lapsed.replaceOne({ _id: 'r1' }, { _id: 'r1', status: 'done' })).rejects.toThrow('no longer holds the projection lease');
    expect(lapsing.calls).toHaveLength(1);
  });

  it('asks again a read whose cursor a collection swap killed (projections rebuild renaming onto the live collection)', async () => {
    const killed = new MongoServerError({ message: 'collection dropped', code: 175, codeName: 'QueryPlanKilled' });
    const { calls, collection } = stubCollection([killed, { _id: 'r1' }]);
    expect(await new MongoCollection('runs', collection, recordingPolicy()).findOne({ _id: 'r1' })).toEqual({ _id: 'r1' });
    expect(calls.map((call) => call.method)).toEqual(['findOne', 'findOne']);
  });

  it('gives up after its attempts with the last error, and never retries an error that is not transient', async () => {
    const failing = stubCollection(Array.from({ length: 6 }, () => steppedDown()));
    const policy = recordingPolicy();
    await expect(new MongoCollection('runs', failing.collection, policy).count({})).rejects.toBeInstanceOf(MongoServerError);
    expect(failing.calls).toHaveLength(5);
    const duplicate = new MongoServerError({ message: 'E11000 duplicate key', code: 11000 });
    const once = stubCollection([duplicate]);
    await expect(new MongoCollection('runs', once.collection, recordingPolicy()).insertOne({ _id: 'r1' })).rejects.toBeInstanceOf(DuplicateKey);
    expect(once.calls).toHaveLength(1);
  });

  it('gives every query a total order: _id alone, or after the given sort in its last direction', async () => {
    const { calls, collection } = stubCollection([null]);
    const runs = new MongoCollection('runs', collection, recordingPolicy());
    await runs.find({ org: 'acme' });
    await runs.find({}, { sort: { score: -1 } });
    await runs.find({}, { sort: { startedAtMillis: -1, _id: -1 } });
    await runs.findOne({ org: 'acme' });
    const sorts = calls.map((call) => (call.method === 'find' ? (call as { sort?: unknown }).sort : (call.args[1] as { sort: unknown }).sort));
    expect(sorts).toEqual([{ _id: 1 }, { score: -1, _id: -1 }, { startedAtMillis: -1, _id: -1 }, { _id: 1 }]);
  });

  it('sends undefined in a filter as null, and drops undefined fields from documents and updates', async () => {
    const { calls, collection } = stubCollection([0, undefined, updated]);
    const runs = new MongoCollection('runs', collection, recordingPolicy());
    await runs.deleteMany({ _id: undefined, $or: [{ org: undefined }, { tags: { $in: [undefined] } }] });
    await runs.insertOne({ _id: 'r1', note: undefined, tags: [undefined, 'a'], owner: { name: undefined, team: 't' } });
    await runs.updateOne({ _id: 'r1' }, { $set: { note: undefined, status: 'done' } });
    expect(calls[0].args[0]).toEqual({ _id: null, $or: [{ org: null }, { tags: { $in: [null] } }] });
    expect(calls[1].args[0]).toStrictEqual({ _id: 'r1', tags: [null, 'a'], owner: { team: 't' } });
    expect(calls[2].args[1]).toStrictEqual({ $set: { status: 'done' } });
  });

  it('ends every index a list is sorted by with _id, so that the tie-breaker is read from the index too', () => {
    expect(totalOrder({ createdAt: -1 })).toEqual({ createdAt: -1, _id: -1 });
    expect(indexKeys({ keys: { organization: 1, createdAt: -1 } })).toEqual({ organization: 1, createdAt: -1, _id: -1 });
    expect(indexKeys({ keys: { organization: 1, sortName: 1, caseId: 1 } })).toEqual({ organization: 1, sortName: 1, caseId: 1, _id: 1 });
    // A unique index has no ties, and `_id` in it would make every key unique.
    expect(indexKeys({ keys: { keyHash: 1 }, unique: true })).toEqual({ keyHash: 1 });
  });
});
