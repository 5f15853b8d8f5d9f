/**
 * The behaviour every ReadStore adapter must share, so that projections tested on the in-memory
 * store behave the same on MongoDB. Collection names carry a per-run prefix so that the suite can
 * run against a shared MongoDB; expectations only ever look at the suite's own collections.
 */
import type { Collection, Document, Filter, FindOptions, IndexSpec, ReadStore, Sort, UpdateResult } from '#infrastructure/read-store/read-store.port';
import { DuplicateKey, findToRead } from '#infrastructure/read-store/read-store.port';
import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { documentProjection, Projection } from '#infrastructure/processing/projection';
import { itNeeding, Lacks } from '../support/mongodb-targets';

export interface OpenedReadStore {
  store: ReadStore;
  cleanup: () => Promise<void>;
}

interface Run extends Document {
  org: string;
  status: string;
  score: number;
  owner: { name: string; team: string };
  tags: string[];
  note?: string | null;
}

interface User extends Document {
  email?: string;
  org?: string;
  slug?: string | null;
}

const RUNS: Run[] = [
  { _id: 'r1', org: 'acme', status: 'running', score: 10, owner: { name: 'Ada', team: 'core' }, tags: ['fast', 'gpu'] },
  { _id: 'r2', org: 'acme', status: 'done', score: 30, owner: { name: 'bob', team: 'infra' }, tags: ['cpu'] },
  { _id: 'r3', org: 'globex', status: 'failed', score: 20, owner: { name: 'Alice', team: 'core' }, tags: [] },
  { _id: 'r4', org: 'acme', status: 'done', score: 20, owner: { name: 'carol', team: 'core' }, tags: ['gpu'] },
  { _id: 'r5', org: 'globex', status: 'running', score: 10, owner: { name: 'dave', team: 'infra' }, tags: ['fast'] },
];
// Set apart so that the fixture reads as a table: r4 has a note, r5 a null one, the others none.
RUNS[3].note = 'x';
RUNS[4].note = null;

const FILTERS: Array<[string, Filter, string[]]> = [
  ['equality', { org: 'acme' }, ['r1', 'r2', 'r4']],
  ['a nested field by dot path', { 'owner.team': 'core' }, ['r1', 'r3', 'r4']],
  ['$in', { status: { $in: ['failed', 'running'] } }, ['r1', 'r3', 'r5']],
  ['$ne', { status: { $ne: 'done' } }, ['r1', 'r3', 'r5']],
  ['a range', { score: { $gt: 10, $lte: 20 } }, ['r3', 'r4']],
  ['a case-insensitive $regex', { 'owner.name': { $regex: '^a', $options: 'i' } }, ['r1', 'r3']],
  ['$or', { $or: [{ org: 'globex' }, { score: 30 }] }, ['r2', 'r3', 'r5']],
  ['$and', { $and: [{ org: 'acme' }, { score: { $gte: 20 } }] }, ['r2', 'r4']],
  ['$exists: true', { note: { $exists: true } }, ['r4', 'r5']],
  ['$exists: false', { note: { $exists: false } }, ['r1', 'r2', 'r3']],
  ['null, which also matches a missing field', { note: null }, ['r1', 'r2', 'r3', 'r5']],
  ['an array element', { tags: 'gpu' }, ['r1', 'r4']],
  ['array $size', { tags: { $size: 0 } }, ['r3']],
  ['_id alone', { _id: 'r2' }, ['r2']],
  ['_id and a matching field', { _id: 'r1', org: 'acme' }, ['r1']],
  ['_id and a field that does not match', { _id: 'r1', org: 'globex' }, []],
  ['an unknown _id', { _id: 'r404' }, []],
];

const SORTS: Array<[Sort, string[]]> = [
  [{ score: 1, _id: -1 }, ['r5', 'r1', 'r4', 'r3', 'r2']],
  [{ score: -1, 'owner.name': -1 }, ['r2', 'r4', 'r3', 'r5', 'r1']],
  // Plain string comparison: capitals sort before lower case.
  [{ 'owner.name': 1 }, ['r1', 'r3', 'r2', 'r4', 'r5']],
  // Missing and null sort together, first ascending and last descending.
  [{ note: 1, _id: 1 }, ['r1', 'r2', 'r3', 'r5', 'r4']],
  [{ note: -1, _id: 1 }, ['r4', 'r1', 'r2', 'r3', 'r5']],
  // An array sorts by its least element ascending, by its greatest descending; an empty one first.
  [{ tags: 1, _id: 1 }, ['r3', 'r2', 'r1', 'r5', 'r4']],
  [{ tags: -1, _id: 1 }, ['r1', 'r4', 'r5', 'r2', 'r3']],
];

const PAGES: Array<[FindOptions, string[]]> = [
  [{ skip: 1, limit: 2 }, ['r2', 'r3']],
  [{ skip: 4, limit: 10 }, ['r5']],
  [{ skip: 10 }, []],
  [{ limit: 3 }, ['r1', 'r2', 'r3']],
];

const ids = (docs: Document[]): string[] => docs.map((doc) => doc._id);
const result = (matchedCount: number, modifiedCount: number, upsertedId: string | null = null): UpdateResult => ({
  matchedCount,
  modifiedCount,
  upsertedId,
});

interface Context {
  store(): ReadStore;
  /** A collection name no other test (or run) uses. */
  name(label: string): string;
  runs(): Promise<Collection<Run>>;
}

/** `value`, failing the test clearly when it is null or undefined. */
function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`expected ${what} to be present`);
  return value;
}

/** `lacks`: what the store under test cannot do (FerretDB's gaps); the tests needing it skip, saying why. */
export function readStoreContract(adapterName: string, open: () => Promise<OpenedReadStore>, lacks: Lacks = {}): void {
  describe(`ReadStore contract: ${adapterName}`, () => {
    const prefix = `rsc_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    let opened: OpenedReadStore;
    let counter = 0;
    const ctx: Context = {
      store: () => opened.store,
      name: (label) => `${prefix}_${label}_${++counter}`,
      runs: async () => {
        const runs = opened.store.collection<Run>(ctx.name('runs'));
        for (const run of RUNS) await runs.insertOne(run);
        return runs;
      },
    };
    beforeEach(async () => {
      opened = await open();
    });
    afterEach(async () => {
      await opened.cleanup();
    });

    queries(ctx);
    inserts(ctx);
    replaces(ctx);
    updates(ctx);
    deletes(ctx);
    uniqueIndexes(ctx, lacks);
    indexedQueries(ctx);
    administration(ctx, prefix);
  });
}

function queries(ctx: Context): void {
  it.each(FILTERS)('finds, counts and findOnes by %s', async (_label, filter, expected) => {
    const runs = await ctx.runs();
    expect(ids(await runs.find(filter, { sort: { _id: 1 } }))).toEqual(expected);
    expect(await runs.count(filter)).toBe(expected.length);
    const one = await runs.findOne(filter);
    if (expected.length === 0) expect(one).toBeNull();
    else expect(expected).toContain(one?._id);
  });

  it.each(SORTS)('sorts by %j', async (sort, expected) => {
    const runs = await ctx.runs();
    expect(ids(await runs.find({}, { sort }))).toEqual(expected);
  });

  it.each(PAGES)('pages with %j', async (page, expected) => {
    const runs = await ctx.runs();
    expect(ids(await runs.find({}, { sort: { _id: 1 }, ...page }))).toEqual(expected);
  });

  it('combines a filter, sort, skip and limit', async () => {
    const runs = await ctx.runs();
    expect(ids(await runs.find({ org: 'acme' }, { sort: { score: -1 }, skip: 1, limit: 1 }))).toEqual(['r4']);
  });

  it('reads undefined in a filter as null: { _id: undefined } matches, changes and deletes nothing', async () => {
    const runs = await ctx.runs();
    const nothing = { _id: undefined } as unknown as Filter;
    expect(await runs.find(nothing)).toEqual([]);
    expect(await runs.count(nothing)).toBe(0);
    expect(await runs.findOne(nothing)).toBeNull();
    expect(await runs.updateMany(nothing, { $set: { status: 'gone' } })).toEqual(result(0, 0));
    expect(await runs.updateOne({ _id: { $in: [undefined] } }, { $set: { status: 'gone' } })).toEqual(result(0, 0));
    expect(await runs.deleteMany(nothing)).toBe(0);
    expect(await runs.deleteOne({ $and: [{ org: 'acme' }, { _id: undefined }] })).toBe(0);
    expect(ids(await runs.find({ note: undefined }, { sort: { _id: 1 } }))).toEqual(ids(await runs.find({ note: null }, { sort: { _id: 1 } })));
    expect(await runs.count({})).toBe(5);
    expect(await runs.count({ status: 'gone' })).toBe(0);
  });

  it('counts all documents, and none in a collection never written', async () => {
    const runs = await ctx.runs();
    expect(await runs.count({})).toBe(5);
    expect(await ctx.store().collection(ctx.name('empty')).count({})).toBe(0);
    expect(await ctx.store().collection(ctx.name('empty')).find({})).toEqual([]);
  });

  it('returns copies: mutating a result changes nothing stored', async () => {
    const runs = await ctx.runs();
    const one = present(await runs.findOne({ _id: 'r1' }), 'run r1');
    one.owner.name = 'mutated';
    one.tags.push('mutated');
    const [first] = await runs.find({ _id: 'r2' });
    first.status = 'mutated';
    expect(await runs.findOne({ _id: 'r1' })).toEqual(RUNS[0]);
    expect(await runs.findOne({ _id: 'r2' })).toEqual(RUNS[1]);
  });

  it('finds to read what find answers, where no change to the answer reaches what is stored', async () => {
    const runs = await ctx.runs();
    const query = [{ org: 'acme' }, { sort: { score: -1 }, skip: 1, limit: 2 }] as const;
    const read = await findToRead(runs, ...query);
    expect(read).toEqual(await runs.find(...query));
    const [first] = read as Run[];
    // A frozen answer refuses the change (strict mode); a copied one takes it for itself.
    const attempt = (change: () => void) => {
      try {
        change();
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
      }
    };
    attempt(() => (first.owner.name = 'mutated'));
    attempt(() => first.tags.push('mutated'));
    attempt(() => (first.status = 'mutated'));
    if (runs.findFrozen) expect(Object.isFrozen(first) && Object.isFrozen(first.owner) && Object.isFrozen(first.tags)).toBe(true);
    expect(await runs.find(...query)).toEqual([RUNS[3], RUNS[0]]);
    // A write after a frozen read replaces the document; the next read sees the change.
    await runs.updateOne({ _id: 'r4' }, { $set: { status: 'changed' }, $push: { tags: 'new' } });
    expect(await findToRead(runs, { _id: 'r4' })).toEqual([{ ...RUNS[3], status: 'changed', tags: ['gpu', 'new'] }]);
  });
}

function inserts(ctx: Context): void {
  it('rejects a second document with the same _id, keeping the first', async () => {
    const runs = await ctx.runs();
    await expect(runs.insertOne({ ...RUNS[1], _id: 'r1' })).rejects.toBeInstanceOf(DuplicateKey);
    expect(await runs.findOne({ _id: 'r1' })).toEqual(RUNS[0]);
    expect(await runs.count({})).toBe(5);
  });

  it('copies documents on write: mutating the input afterwards changes nothing stored', async () => {
    const runs = ctx.store().collection<Run>(ctx.name('runs'));
    const input = structuredClone(RUNS[0]);
    await runs.insertOne(input);
    input.owner.team = 'mutated';
    input.tags.push('mutated');
    expect(await runs.findOne({ _id: 'r1' })).toEqual(RUNS[0]);
  });
}

function replaces(ctx: Context): void {
  it('replaces the whole document, dropping fields the replacement lacks', async () => {
    const runs = await ctx.runs();
    const replacement = { _id: 'r4', org: 'acme', status: 'archived', score: 1, owner: RUNS[3].owner, tags: [] };
    expect(await runs.replaceOne({ _id: 'r4' }, replacement)).toEqual(result(1, 1));
    expect(await runs.findOne({ _id: 'r4' })).toEqual(replacement);
  });

  it('reports an identical replacement as matched but not modified', async () => {
    const runs = await ctx.runs();
    expect(await runs.replaceOne({ _id: 'r2' }, RUNS[1], { upsert: true })).toEqual(result(1, 0));
  });

  it('inserts nothing without upsert, and inserts with it', async () => {
    const runs = await ctx.runs();
    const r6: Run = { ...RUNS[0], _id: 'r6' };
    expect(await runs.replaceOne({ _id: 'r6' }, r6)).toEqual(result(0, 0));
    expect(await runs.findOne({ _id: 'r6' })).toBeNull();
    expect(await runs.replaceOne({ _id: 'r6' }, r6, { upsert: true })).toEqual(result(0, 0, 'r6'));
    expect(await runs.findOne({ _id: 'r6' })).toEqual(r6);
  });
}

function updates(ctx: Context): void {
  it('applies $set on a dot path, $inc, $push with $each and $unset together', async () => {
    const runs = await ctx.runs();
    const update = {
      $set: { 'owner.team': 'ml' },
      $inc: { score: 5, retries: 1 },
      $push: { tags: { $each: ['tpu', 'arm'] } },
      $unset: { note: '' },
    };
    expect(await runs.updateOne({ _id: 'r4' }, update)).toEqual(result(1, 1));
    const { note, ...unchanged } = RUNS[3];
    expect(note).toBe('x');
    expect(await runs.findOne({ _id: 'r4' })).toEqual({
      ...unchanged,
      owner: { name: 'carol', team: 'ml' },
      score: 25,
      retries: 1,
      tags: ['gpu', 'tpu', 'arm'],
    });
  });

  it('pushes a single value', async () => {
    const runs = await ctx.runs();
    await runs.updateOne({ _id: 'r3' }, { $push: { tags: 'slow' } });
    expect((await runs.findOne({ _id: 'r3' }))?.tags).toEqual(['slow']);
  });

  it('ignores $setOnInsert when the upsert finds a document', async () => {
    const runs = await ctx.runs();
    const update = { $set: { status: 'archived' }, $setOnInsert: { createdBy: 'seed' } };
    expect(await runs.updateOne({ _id: 'r2' }, update, { upsert: true })).toEqual(result(1, 1));
    expect(await runs.findOne({ _id: 'r2' })).toEqual({ ...RUNS[1], status: 'archived' });
  });

  it('applies $setOnInsert when the upsert inserts', async () => {
    const runs = await ctx.runs();
    const update = { $set: { status: 'queued' }, $setOnInsert: { createdBy: 'seed' } };
    expect(await runs.updateOne({ _id: 'r9' }, update, { upsert: true })).toEqual(result(0, 0, 'r9'));
    expect(await runs.findOne({ _id: 'r9' })).toEqual({ _id: 'r9', status: 'queued', createdBy: 'seed' });
  });

  it('upserts from the filter equality fields with a generated string _id', async () => {
    const tallies = ctx.store().collection(ctx.name('tallies'));
    const filter = { org: 'initech', 'owner.team': 'ops', status: { $eq: 'new' }, score: { $gt: 5 } };
    const inserted = await tallies.updateOne(filter, { $inc: { count: 1 } }, { upsert: true });
    expect(inserted).toEqual(result(0, 0, expect.any(String) as string));
    const id = present(inserted.upsertedId, 'upsertedId');
    const seeded = { _id: id, org: 'initech', owner: { team: 'ops' }, status: 'new' };
    expect(await tallies.findOne({ _id: id })).toEqual({ ...seeded, count: 1 });
    const again = { org: 'initech', 'owner.team': 'ops' };
    expect(await tallies.updateOne(again, { $inc: { count: 1 } }, { upsert: true })).toEqual(result(1, 1));
    expect(await tallies.find({})).toEqual([{ ...seeded, count: 2 }]);
  });

  it('changes nothing when nothing matches and upsert is off', async () => {
    const runs = await ctx.runs();
    expect(await runs.updateOne({ org: 'nobody' }, { $set: { status: 'x' } })).toEqual(result(0, 0));
    expect(await runs.count({})).toBe(5);
  });

  it('updates one document when several match, and counts a no-op as unmodified', async () => {
    const runs = await ctx.runs();
    expect(await runs.updateOne({ org: 'acme' }, { $set: { flagged: true } })).toEqual(result(1, 1));
    expect(await runs.count({ flagged: true })).toBe(1);
    expect(await runs.updateOne({ _id: 'r2' }, { $set: { status: 'done' } })).toEqual(result(1, 0));
  });

  it('updates every match with updateMany and counts matched and modified apart', async () => {
    const runs = await ctx.runs();
    expect(await runs.updateMany({ org: 'acme' }, { $set: { status: 'done' } })).toEqual(result(3, 1));
    expect(await runs.updateMany({ org: 'acme' }, { $inc: { score: 1 } })).toEqual(result(3, 3));
    expect(ids(await runs.find({ score: { $in: [11, 31, 21] } }, { sort: { _id: 1 } }))).toEqual(['r1', 'r2', 'r4']);
    expect(await runs.updateMany({ org: 'nobody' }, { $inc: { score: 1 } })).toEqual(result(0, 0));
  });
}

function deletes(ctx: Context): void {
  it('deletes one, or every match, and counts what went', async () => {
    const runs = await ctx.runs();
    expect(await runs.deleteOne({ org: 'acme' })).toBe(1);
    expect(await runs.count({ org: 'acme' })).toBe(2);
    expect(await runs.deleteOne({ org: 'nobody' })).toBe(0);
    expect(await runs.deleteOne({ _id: 'r3' })).toBe(1);
    expect(await runs.deleteMany({ status: 'running' })).toBe(1);
    expect(await runs.deleteMany({})).toBe(2);
    expect(await runs.find({})).toEqual([]);
  });
}

function uniqueIndexes(ctx: Context, lacks: Lacks): void {
  itNeeding(lacks, 'uniqueIndexErrors')('enforces a unique index on insert, replace and update, and frees keys on delete', async () => {
    const name = ctx.name('users');
    await ctx.store().ensureIndexes(name, [{ keys: { email: 1 }, unique: true }, { keys: { org: 1, slug: -1 } }]);
    await ctx.store().ensureIndexes(name, [{ keys: { email: 1 }, unique: true }]);
    const users = ctx.store().collection<User>(name);
    await users.insertOne({ _id: 'u1', email: 'a@x', org: 'acme' });
    await users.insertOne({ _id: 'u2', email: 'b@x', org: 'acme' });
    await expect(users.insertOne({ _id: 'u3', email: 'a@x' })).rejects.toBeInstanceOf(DuplicateKey);
    await expect(users.replaceOne({ _id: 'u2' }, { _id: 'u2', email: 'a@x' })).rejects.toBeInstanceOf(DuplicateKey);
    await expect(users.updateOne({ _id: 'u2' }, { $set: { email: 'a@x' } })).rejects.toBeInstanceOf(DuplicateKey);
    await expect(users.updateOne({ _id: 'u4' }, { $set: { email: 'a@x' } }, { upsert: true })).rejects.toBeInstanceOf(DuplicateKey);
    expect(await users.findOne({ _id: 'u2' })).toEqual({ _id: 'u2', email: 'b@x', org: 'acme' });
    expect(await users.updateOne({ _id: 'u2' }, { $set: { email: 'c@x' } })).toEqual(result(1, 1));
    await users.insertOne({ _id: 'u5', email: 'b@x' });
    await users.deleteOne({ _id: 'u1' });
    await users.insertOne({ _id: 'u3', email: 'a@x' });
    expect(ids(await users.find({}, { sort: { email: 1 } }))).toEqual(['u3', 'u5', 'u2']);
  });

  itNeeding(lacks, 'multikeyAndNullUniqueKeys')(
    'keys a unique index on a field by each element of an array there, and tells a string from other values',
    async () => {
      const name = ctx.name('aliases');
      await ctx.store().ensureIndexes(name, [{ keys: { alias: 1 }, unique: true }]);
      const aliases = ctx.store().collection(name);
      await aliases.insertOne({ _id: 'a1', alias: 'one' });
      await aliases.insertOne({ _id: 'a2', alias: ['two', 'three'] });
      // Neither the number 1 nor the string "null" is the string "1" or a missing alias.
      await aliases.insertOne({ _id: 'a3', alias: 1 });
      await aliases.insertOne({ _id: 'a4', alias: '1' });
      await aliases.insertOne({ _id: 'a5', alias: 'null' });
      await aliases.insertOne({ _id: 'a6' });
      await expect(aliases.insertOne({ _id: 'x1', alias: ['one', 'four'] })).rejects.toBeInstanceOf(DuplicateKey);
      await expect(aliases.insertOne({ _id: 'x2', alias: 'three' })).rejects.toBeInstanceOf(DuplicateKey);
      await expect(aliases.insertOne({ _id: 'x3', alias: null })).rejects.toBeInstanceOf(DuplicateKey);
      await expect(aliases.insertOne({ _id: 'x4', alias: 1 })).rejects.toBeInstanceOf(DuplicateKey);
      // A document keeps its own keys when it is rewritten, and gives back those it drops.
      await aliases.replaceOne({ _id: 'a2' }, { _id: 'a2', alias: ['two', 'five'] });
      await aliases.insertOne({ _id: 'a7', alias: 'three' });
      expect(await aliases.count({})).toBe(7);
    },
  );

  itNeeding(lacks, 'multikeyAndNullUniqueKeys')('enforces a compound unique index on the combination, with a missing field as null', async () => {
    const name = ctx.name('slugs');
    await ctx.store().ensureIndexes(name, [{ keys: { org: 1, slug: 1 }, unique: true }]);
    const slugs = ctx.store().collection<User>(name);
    await slugs.insertOne({ _id: 's1', org: 'acme', slug: 'eval' });
    await slugs.insertOne({ _id: 's2', org: 'globex', slug: 'eval' });
    await slugs.insertOne({ _id: 's3', org: 'acme' });
    await expect(slugs.insertOne({ _id: 's4', org: 'acme', slug: 'eval' })).rejects.toBeInstanceOf(DuplicateKey);
    await expect(slugs.insertOne({ _id: 's5', org: 'acme', slug: null })).rejects.toBeInstanceOf(DuplicateKey);
  });

  itNeeding(lacks, 'uniqueIndexErrors')('refuses a unique index over existing duplicates; a plain index accepts them', async () => {
    const users = ctx.store().collection<User>(ctx.name('users'));
    await users.insertOne({ _id: 'u1', org: 'acme', email: 'a@x' });
    await users.insertOne({ _id: 'u2', org: 'acme', email: 'a@x' });
    await ctx.store().ensureIndexes(users.name, [{ keys: { org: 1 } }]);
    const unique = ctx.store().ensureIndexes(users.name, [{ keys: { email: 1 }, unique: true }]);
    await expect(unique).rejects.toBeInstanceOf(DuplicateKey);
    await users.insertOne({ _id: 'u3', org: 'acme', email: 'a@x' });
    expect(await users.count({ org: 'acme' })).toBe(3);
  });

  it('takes the same indexes declared again at each start, and enforces an index made unique in a later release', async () => {
    const users = ctx.store().collection<User>(ctx.name('users'));
    const declared: IndexSpec[] = [{ keys: { email: 1 } }, { keys: { org: 1, email: 1 } }];
    await ctx.store().ensureIndexes(users.name, declared);
    await users.insertOne({ _id: 'u1', org: 'acme', email: 'a@x' });
    await ctx.store().ensureIndexes(users.name, declared);
    await ctx.store().ensureIndexes(users.name, [{ keys: { email: 1 }, unique: true }, declared[1]]);
    await expect(users.insertOne({ _id: 'u2', org: 'globex', email: 'a@x' })).rejects.toBeInstanceOf(DuplicateKey);
    expect(await users.find({ email: 'a@x' })).toEqual([{ _id: 'u1', org: 'acme', email: 'a@x' }]);
  });
}

function administration(ctx: Context, prefix: string): void {
  const ours = async (): Promise<string[]> => (await ctx.store().collectionNames()).filter((name) => name.startsWith(prefix));

  it('names the collections that were written, not those only read', async () => {
    const runs = await ctx.runs();
    const unread = ctx.name('never-written');
    await ctx.store().collection(unread).find({});
    const names = await ours();
    expect(names).toContain(runs.name);
    expect(names).not.toContain(unread);
  });

  it('drops every collection and its indexes, leaving existing handles usable', async () => {
    const runs = await ctx.runs();
    const users = ctx.store().collection<User>(ctx.name('users'));
    await ctx.store().ensureIndexes(users.name, [{ keys: { email: 1 }, unique: true }]);
    await users.insertOne({ _id: 'u1', email: 'a@x' });
    await ctx.store().dropAll();
    expect(await ours()).toEqual([]);
    expect(await runs.find({})).toEqual([]);
    await users.insertOne({ _id: 'u1', email: 'a@x' });
    await users.insertOne({ _id: 'u2', email: 'a@x' });
    expect(await users.count({})).toBe(2);
  });

  it('answers a ping', async () => {
    expect(await ctx.store().ping()).toBe(true);
  });
}

/** Indexes only make queries faster: indexed and unindexed collections answer alike, in the same order. */
function indexedQueries(ctx: Context): void {
  it('answers queries on indexed fields exactly as on unindexed ones', async () => {
    const documents = [
      { _id: 'a', org: 'o1', kind: 'x', nested: { id: 'n1' }, n: 1 },
      { _id: 'b', org: 'o2', kind: 'y', nested: { id: 'n2' }, n: 2 },
      { _id: 'c', org: ['o1', 'o3'], kind: 'x', nested: { id: 'n1' }, n: 3 },
      { _id: 'd', kind: 'z', n: 4 },
      { _id: 'e', org: null, kind: 'x', nested: [{ id: 'n1' }], n: 5 },
      { _id: 'f', org: 'o1', kind: 'y', nested: { id: 'n3' }, n: 1 },
      { _id: 'g', org: 1, kind: 'x', n: 7 },
    ];
    const plain = ctx.store().collection(ctx.name('plain'));
    const indexed = ctx.store().collection(ctx.name('indexed'));
    await ctx.store().ensureIndexes(indexed.name, [{ keys: { org: 1, n: -1 } }, { keys: { 'nested.id': 1 } }, { keys: { kind: 1 } }]);
    for (const document of documents) {
      await plain.insertOne(document);
      await indexed.insertOne(document);
    }
    await plain.updateOne({ _id: 'f' }, { $set: { org: 'o2' } });
    await indexed.updateOne({ _id: 'f' }, { $set: { org: 'o2' } });
    await plain.deleteOne({ _id: 'b' });
    await indexed.deleteOne({ _id: 'b' });
    const filters = [
      { org: 'o1' },
      { org: 'o2' },
      { org: null },
      { org: 1 },
      { org: '1' },
      { org: { $eq: 'o1' } },
      { org: { $in: ['o1', 'o2'] } },
      { 'nested.id': 'n1' },
      { org: 'o1', kind: 'x' },
      { org: 'o1', n: 1 },
      { org: 'o2', n: 1 },
      { org: 'o1', n: { $gte: 1 } },
      { kind: 'x', n: { $gt: 1 } },
      { kind: 'nope' },
    ];
    const compare = async () => {
      for (const filter of filters) {
        expect({ filter, found: await indexed.find(filter) }).toEqual({ filter, found: await plain.find(filter) });
        expect(await indexed.find(filter, { sort: { n: 1 } })).toEqual(await plain.find(filter, { sort: { n: 1 } }));
        expect(await indexed.count(filter)).toBe(await plain.count(filter));
        expect(await indexed.findOne(filter)).toEqual(await plain.findOne(filter));
      }
    };
    await compare();
    // Writes after the first queries keep answering alike: moves, arrays, removals, upserts.
    for (const collection of [plain, indexed]) {
      await collection.updateOne({ _id: 'a' }, { $set: { org: 'o2', n: 1 } });
      await collection.updateOne({ _id: 'g' }, { $set: { org: ['o1', 'o2'] } });
      await collection.deleteOne({ _id: 'c' });
      await collection.replaceOne({ _id: 'h' }, { _id: 'h', org: 'o1', kind: 'x', n: 8 }, { upsert: true });
      await collection.updateMany({ kind: 'x' }, { $inc: { n: 10 } });
    }
    await compare();
  });
}

interface Tally extends Document {
  total: number;
  /** The order events were applied in: any lost or reordered update shows here. */
  seen: number[];
}

/**
 * Events of a tiny log: each adds to one of three tallies. The order matters (`seen`), so a
 * lost update or one applied out of order changes the documents.
 */
function tallyEvents(count: number): RecordedEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `e${index + 1}`,
    position: index + 1,
    streamName: `tally-${index % 3}`,
    revision: Math.floor(index / 3),
    type: 'Tallied',
    data: { tally: `t${index % 3}`, amount: (index * 7) % 5 },
    metadata: { organization: 'acme', actor: 'contract', correlationId: 'contract', causationId: 'contract' },
    createdAt: new Date(0).toISOString(),
  }));
}

function tallyProjection(collection: string): Projection {
  return documentProjection<Tally>({
    name: 'tally',
    collection,
    eventTypes: ['Tallied'],
    documentId: (event) => (event.data as { tally: string }).tally,
    evolve: (document, event, id) => {
      const { amount } = event.data as { amount: number };
      return { _id: id, total: (document?.total ?? 0) + amount, seen: [...(document?.seen ?? []), event.position] };
    },
  });
}

/** A promise and the function that settles it. */
export function signal(): { promise: Promise<void>; settle: () => void } {
  let settle: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (settle = resolve));
  return { promise, settle };
}

/**
 * The store as one writer sees it when its write of the document at `position` is slow: the
 * write waits for `release` (after the writer read the document), reaches the store, and the
 * writer then stalls until `resume`, while the other writer moves on. The adapter itself answers;
 * a slow store offers no one-step evolveOne, so the writer reads, then writes guarded.
 */
export function slowWriteAt(
  store: ReadStore,
  position: number,
  gates: { reached: () => void; release: Promise<void>; written: () => void; resume: Promise<void> },
): ReadStore {
  const held = (args: unknown[]) => args.some((arg) => typeof arg === 'object' && arg !== null && (arg as { _position?: unknown })._position === position);
  const wrap = (collection: Collection): Collection =>
    new Proxy(collection, {
      get(target, property: keyof Collection) {
        if (property === 'evolveOne') return undefined;
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function' || !['insertOne', 'replaceOne'].includes(property)) return value;
        return async (...args: unknown[]) => {
          if (!held(args)) return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          gates.reached();
          await gates.release;
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            gates.written();
            await gates.resume;
          }
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

/** The store without the one-step evolveOne, as a store that has none: projections read, then write guarded. */
export function withoutEvolveOne(store: ReadStore): ReadStore {
  const wrap = (collection: Collection): Collection =>
    new Proxy(collection, {
      get: (target, property: keyof Collection) => {
        if (property === 'evolveOne') return undefined;
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
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

/** Guarded projection writes: two projectors of one log end in the same documents, however they interleave. */
export function guardedWritesContract(adapterName: string, open: () => Promise<OpenedReadStore>): void {
  describe(`ReadStore contract, guarded projection writes: ${adapterName}`, () => {
    let opened: OpenedReadStore;
    beforeAll(async () => {
      opened = await open();
    });
    afterAll(() => opened.cleanup());

    const events = tallyEvents(60);
    const apply = async (projection: Projection, store: ReadStore, from: number, to: number) => {
      for (const event of events.slice(from, to)) await projection.project(event, store);
    };
    const documents = (collection: string) => opened.store.collection(collection).find({}, { sort: { _id: 1 } });

    it.each([
      ['a first write (insert)', 1, 30],
      ['an update', 4, 10],
      ['an update, the other writer finishing the log meanwhile', 13, 60],
    ])('a slow writer of %s does not undo the other writer, nor make it skip events', async (_, position, aheadTo) => {
      const collection = `guarded_${position}_${Date.now().toString(36)}`;
      const projection = tallyProjection(collection);
      const alone = `${collection}_alone`;
      await apply(tallyProjection(alone), opened.store, 0, events.length);

      const reached = signal();
      const release = signal();
      const written = signal();
      const resume = signal();
      const slow = slowWriteAt(opened.store, position, { reached: reached.settle, release: release.promise, written: written.settle, resume: resume.promise });
      // The slow writer reads the document, then its write of `position` waits.
      const slowWriter = apply(projection, slow, 0, events.length);
      await reached.promise;
      // The other writer moves past it; then the slow write lands, and the other writer goes on.
      await apply(projection, opened.store, 0, aheadTo);
      release.settle();
      await written.promise;
      await apply(projection, opened.store, aheadTo, events.length);
      resume.settle();
      await slowWriter;

      expect(await documents(collection)).toEqual(await documents(alone));
      expect(((await documents(alone))[0] as Tally).seen).toEqual(events.filter((event) => event.position % 3 === 1).map((event) => event.position));
    });

    it('a store that reads and writes in one step (evolveOne) ends in the documents of the guarded path', async () => {
      const collection = `guarded_step_${Date.now().toString(36)}`;
      const guarded = `${collection}_guarded`;
      await apply(tallyProjection(collection), opened.store, 0, events.length);
      await apply(tallyProjection(guarded), withoutEvolveOne(opened.store), 0, events.length);
      // Redelivered events change nothing on either path.
      await apply(tallyProjection(collection), opened.store, 0, events.length);
      await apply(tallyProjection(guarded), withoutEvolveOne(opened.store), 0, events.length);
      expect(await documents(collection)).toEqual(await documents(guarded));
      expect(await documents(collection)).toHaveLength(3);
    });

    it('a writer replaying an event the other already applied writes nothing', async () => {
      const collection = `guarded_replay_${Date.now().toString(36)}`;
      const projection = tallyProjection(collection);
      await apply(projection, opened.store, 0, 10);
      const before = await documents(collection);
      await apply(projection, opened.store, 0, 10);
      expect(await documents(collection)).toEqual(before);
    });
  });
}
