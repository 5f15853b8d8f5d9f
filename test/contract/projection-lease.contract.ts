/**
 * The projection lease and its fences, on every ReadStore adapter: the election is written
 * against the port, so acquiring, renewing, taking over and fencing must hold the same on the
 * in-memory store and on MongoDB. Wall clocks are the tests' own, so that expiry needs no wait.
 */
import type { OpenedReadStore } from './read-store.contract';
import { FencedReadStore, writableByTerm } from '#infrastructure/processing/fenced-read-store';
import { ProjectionFence, ProjectionLeaseLost } from '#infrastructure/processing/projection-fence';
import { PROJECTION_LEASES, ProjectionLease } from '#infrastructure/processing/projection-lease';
import { CHECKPOINTS } from '#infrastructure/processing/projection-runner';

const LEASE_MS = 10_000;

/** The term of a lease that must have been granted. */
async function granted(lease: ProjectionLease): Promise<number> {
  const grant = await lease.acquire();
  if (grant === null) throw new Error(`expected ${lease.holder} to get the lease`);
  return grant.term;
}

export function projectionLeaseContract(adapterName: string, open: () => Promise<OpenedReadStore>): void {
  describe(`Projection lease contract: ${adapterName}`, () => {
    const prefix = `lease_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
    let opened: OpenedReadStore;
    let counter = 0;
    let now = 1_000_000;
    let runner: string;
    const clock = () => now;
    const lease = (holder: string) => new ProjectionLease(opened.store, runner, holder, LEASE_MS, clock);
    const stored = () => opened.store.collection(PROJECTION_LEASES).findOne({ _id: runner });

    beforeEach(async () => {
      opened = await open();
      runner = `${prefix}_${++counter}`;
      now = 1_000_000;
    });
    afterEach(() => opened.cleanup());

    it('gives a lease nobody holds to the first instance asking, in term 1', async () => {
      expect(await lease('a').acquire()).toEqual({ term: 1, expiresAt: now + LEASE_MS });
      expect(await stored()).toEqual({ _id: runner, owner: 'a', expiresAt: now + LEASE_MS, term: 1 });
    });

    it('refuses a running lease to another instance and leaves it as it was', async () => {
      await lease('a').acquire();
      const before = await stored();
      now += LEASE_MS - 1;
      expect(await lease('b').acquire()).toBeNull();
      expect(await stored()).toEqual(before);
    });

    it('gives a free lease to exactly one of several instances asking at once', async () => {
      const grants = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((holder) => lease(holder).acquire()));
      expect(grants.filter((grant) => grant !== null)).toEqual([{ term: 1, expiresAt: now + LEASE_MS }]);
      const winner = ['a', 'b', 'c', 'd', 'e'][grants.findIndex((grant) => grant !== null)];
      expect(await stored()).toMatchObject({ owner: winner, term: 1 });
    });

    it('renews the owner, moving the expiry on; a renewal of another term is lost', async () => {
      const owner = lease('a');
      const term = await granted(owner);
      now += 4_000;
      expect(await owner.renew(term)).toEqual({ outcome: 'renewed', expiresAt: now + LEASE_MS });
      expect(await stored()).toMatchObject({ owner: 'a', term: 1, expiresAt: now + LEASE_MS });
      expect(await owner.renew(term + 1)).toEqual({ outcome: 'lost', owner: 'a' });
      // A renewal keeps the term: only a change of hands raises it.
      expect(await stored()).toMatchObject({ term: 1 });
    });

    it('lets another instance take over once the lease expired, in a higher term; the old owner renews no more', async () => {
      const old = lease('a');
      const first = await granted(old);
      now += LEASE_MS + 1;
      expect(await lease('b').acquire()).toEqual({ term: 2, expiresAt: now + LEASE_MS });
      expect(await old.renew(first)).toEqual({ outcome: 'lost', owner: 'b' });
      expect(await old.acquire()).toBeNull();
      expect(await stored()).toMatchObject({ owner: 'b', term: 2 });
    });

    it('gives the lease back at once to an instance restarted under the same id, in a new term', async () => {
      await lease('a').acquire();
      expect(await lease('a').acquire()).toEqual({ term: 2, expiresAt: now + LEASE_MS });
    });

    it('hands over on request: the owner is told at its renewal, the requester then holds it', async () => {
      const owner = lease('a');
      const rebuild = lease('rebuild-1');
      const term = await granted(owner);
      expect(await rebuild.acquire()).toBeNull();
      await rebuild.requestHandover();
      expect(await owner.renew(term)).toEqual({ outcome: 'handover', to: 'rebuild-1' });
      // Told to ignore requests (the rebuild holding it for its swap), the holder keeps renewing.
      expect(await owner.renew(term, false)).toMatchObject({ outcome: 'renewed' });
      expect(await owner.handOver(term, 'rebuild-1')).toBe(true);
      expect(await owner.renew(term)).toEqual({ outcome: 'lost', owner: 'rebuild-1' });
      const taken = await rebuild.acquire();
      expect(taken?.term).toBe(3);
      expect(await stored()).toEqual({ _id: runner, owner: 'rebuild-1', term: 3, expiresAt: now + LEASE_MS });
      expect(await lease('b').acquire()).toBeNull();
    });

    it('withdraws a request for the lease: the owner then renews as before', async () => {
      const owner = lease('a');
      const term = await granted(owner);
      await lease('rebuild-1').requestHandover();
      await lease('rebuild-1').withdrawHandover();
      expect(await owner.renew(term)).toMatchObject({ outcome: 'renewed' });
    });

    it('lets another instance take a released lease at once', async () => {
      const owner = lease('a');
      await owner.release(await granted(owner));
      expect(await lease('b').acquire()).toMatchObject({ term: 2 });
    });

    it('fences a replaced owner off the checkpoints: its writes are refused and it learns it lost the lease', async () => {
      const checkpoint = `${runner}/tally`;
      const checkpoints = opened.store.collection(CHECKPOINTS);
      const advance = (store: FencedReadStore, position: number) =>
        store.collection(CHECKPOINTS).updateOne({ _id: checkpoint, position: { $lt: position } }, { $set: { position } }, { upsert: true });
      const fenceA = new ProjectionFence(() => 0);
      const lost: string[] = [];
      fenceA.onLost((reason) => lost.push(reason));
      const a = new FencedReadStore(opened.store, fenceA);
      // Deadlines a minute ahead: the fence also ends at the wall clock's, which a loaded machine must not reach here.
      fenceA.hold(await granted(lease('a')), 60_000);
      await advance(a, 5);
      expect(await checkpoints.findOne({ _id: checkpoint })).toEqual({ _id: checkpoint, position: 5, term: 1 });
      // A checkpoint never goes in a bulk, which would carry no term.
      const bulk = a.collection(CHECKPOINTS).bulkWrite([{ replaceOne: { filter: { _id: checkpoint }, replacement: { _id: checkpoint, position: 99 } } }]);
      await expect(bulk).rejects.toThrow('each with its term');
      expect(await checkpoints.findOne({ _id: checkpoint })).toEqual({ _id: checkpoint, position: 5, term: 1 });

      // A is paused past its lease; B takes over and stamps its term on the checkpoints first.
      now += LEASE_MS + 1;
      const termB = await granted(lease('b'));
      await checkpoints.updateMany({ $and: [{ _id: { $in: [checkpoint] } }, writableByTerm(termB - 1)] }, { $set: { term: termB } });

      await expect(advance(a, 9)).rejects.toBeInstanceOf(ProjectionLeaseLost);
      expect(lost).toEqual([expect.stringContaining(`later term (${termB})`)]);
      expect(fenceA.term).toBeNull();
      await expect(a.collection(`${runner}_documents`).insertOne({ _id: 'late' })).rejects.toBeInstanceOf(ProjectionLeaseLost);
      expect(await opened.store.collection(`${runner}_documents`).count({})).toBe(0);

      const fenceB = new ProjectionFence(() => 0);
      fenceB.hold(termB, 60_000);
      await advance(new FencedReadStore(opened.store, fenceB), 9);
      expect(await checkpoints.findOne({ _id: checkpoint })).toEqual({ _id: checkpoint, position: 9, term: termB });
    });

    it('stops an owner whose hold lapsed: not one more write, and it is told once', async () => {
      let monotonic = 0;
      const fence = new ProjectionFence(() => monotonic);
      const lost: string[] = [];
      fence.onLost((reason) => lost.push(reason));
      const store = new FencedReadStore(opened.store, fence);
      const documents = store.collection(`${runner}_documents`);
      fence.hold(1, 60_000);
      await documents.insertOne({ _id: 'in-time' });
      monotonic = 60_001;
      await expect(documents.replaceOne({ _id: 'in-time' }, { _id: 'in-time', late: true })).rejects.toBeInstanceOf(ProjectionLeaseLost);
      await expect(documents.deleteOne({ _id: 'in-time' })).rejects.toBeInstanceOf(ProjectionLeaseLost);
      await expect(documents.bulkWrite([{ insertOne: { document: { _id: 'late' } } }])).rejects.toBeInstanceOf(ProjectionLeaseLost);
      expect(await opened.store.collection(`${runner}_documents`).find({})).toEqual([{ _id: 'in-time' }]);
      expect(lost).toEqual(['the lease was not renewed in time']);
    });
  });
}
