import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '../logging/json-logger';
import { ServiceMetrics } from '../metrics/service-metrics';
import { PROJECTION_LEASES, PROJECTION_RUNNER } from './projection-lease';
import { rebuildAndSwap } from './projection-rebuild';
import { MemoryReadStore } from '../read-store/memory/memory-read-store';
import { databaseFromUrl, MongoReadStore } from '../read-store/mongodb/mongodb-read-store';
import type { ReadStore } from '../read-store/read-store.port';
import { HealthController } from '#modules/operations/health.controller';
import { waitUntil } from '../../../test/support/servers';
import { happen, instance, Instance, logFile, rebuiltThings, thingProjections, things } from '../../../test/support/shared-read-store';
import { replyRecorder } from '../../../test/support/reply-recorder';
import { tempDir } from '../../../test/support/temp-dirs';

/** Instances' connections to one shared read store, and one more to read it. */
interface SharedStore {
  connect(): Promise<ReadStore>;
  reader: ReadStore;
  cleanup(): Promise<void>;
}

const LEASE_MS = 600;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function electionSuite(adapter: string, openShared: () => Promise<SharedStore>): void {
  describe(`projections on a shared read store (${adapter}): one elected owner applies the log, the others follow`, () => {
    let dir: string;
    let shared: SharedStore;
    let running: Instance[];

    const start = async (id: string, clock?: () => number): Promise<Instance> => {
      const started = instance(id, dir, await shared.connect(), LEASE_MS, clock);
      running.push(started);
      await started.election.start();
      return started;
    };
    const thingPositions = async () => (await running[0].eventStore.readAll()).filter((event) => event.type === 'ThingHappened').map((event) => event.position);

    beforeEach(async () => {
      dir = tempDir('assay-election-');
      shared = await openShared();
      running = [];
    });

    afterEach(async () => {
      for (const each of running) {
        await each.election.stop();
        await each.eventStore.close();
      }
      await shared.cleanup();
    });

    it('lets one instance apply every event; a write through the follower answers once the owner projected it', async () => {
      const a = await start('a');
      const b = await start('b');
      expect([a.election.role, b.election.role, a.runner.role, b.runner.role]).toEqual(['owner', 'follower', 'owner', 'follower']);
      const positions: number[] = [];
      for (let index = 0; index < 12; index += 1) positions.push(await happen(index % 2 === 0 ? b.eventStore : a.eventStore, `n${index % 4}`));

      // Read-your-writes on the follower: it learns of the owner's progress from the checkpoints.
      expect(await b.runner.waitFor(positions[11], 5000)).toBe(true);
      expect(await shared.reader.collection('tallies').findOne({ _id: 'things' })).toMatchObject({ count: 12 });
      expect(a.applied).toEqual(positions);
      expect(b.applied).toEqual([]);
      expect(b.runner.generation('notes')).toBeGreaterThan(0);
      expect(await things(shared.reader)).toEqual(await rebuiltThings(a.eventStore));
      expect(a.logged('projection role: owner')).toBe(true);
      expect(b.logged('projection role: follower')).toBe(true);

      const { answer, reply } = replyRecorder();
      await new HealthController(b.eventStore, shared.reader, b.runner).ready(reply);
      expect(answer).toEqual({ status: 200, body: { status: 'ready', position: positions[11], head: positions[11], role: 'follower' } });
      const owners = async (each: Instance) =>
        (await new ServiceMetrics(each.eventStore, each.runner).scrape()).text.match(/^assay_projection_owner (\d)$/m)?.[1];
      expect([await owners(a), await owners(b)]).toEqual(['1', '0']);
    });

    it('hands the log to the follower when the owner cannot renew: the old owner stops at once, no event is applied twice or lost', async () => {
      const a = await start('a');
      const b = await start('b');
      for (let index = 0; index < 5; index += 1) await happen(a.eventStore, `n${index % 3}`);
      await waitUntil(async () => b.runner.position === (await b.eventStore.headPosition()), 5000);

      a.partition(true);
      // Events keep coming while the owner's renewals fail, its hold lapses and the follower takes over.
      const give = Date.now() + 10_000;
      while ((b.election.role !== 'owner' || b.applied.length < 3) && Date.now() < give) {
        await happen(b.eventStore, `m${Date.now() % 4}`);
        await sleep(20);
      }
      const last = await happen(b.eventStore, 'last');
      expect(await b.runner.waitFor(last, 5000)).toBe(true);

      expect([a.election.role, b.election.role]).toEqual(['follower', 'owner']);
      expect(a.logged('projection role: follower (the lease was lost)')).toBe(true);
      expect(a.applied.length).toBeGreaterThan(5);
      expect([...a.applied, ...b.applied].sort((x, y) => x - y)).toEqual(await thingPositions());
      expect(await things(shared.reader)).toEqual(await rebuiltThings(a.eventStore));
      expect(await shared.reader.collection(PROJECTION_LEASES).findOne({ _id: PROJECTION_RUNNER })).toMatchObject({ owner: 'b', term: 2 });

      // Back in touch, the old owner follows: a write through it answers once the new owner projected it.
      a.partition(false);
      const after = await happen(a.eventStore, 'after');
      expect(await a.runner.waitFor(after, 5000)).toBe(true);
      expect(b.applied).toContain(after);
      expect(a.election.role).toBe('follower');
    });

    it('hands the log over at once when the owner stops: the follower resumes from the checkpoints', async () => {
      const a = await start('a');
      // B's clock stands still: A's lease never looks expired to it, so only a release lets it in.
      const stoppedClock = Date.now();
      const b = await start('b', () => stoppedClock);
      let position = -1;
      for (let index = 0; index < 5; index += 1) position = await happen(a.eventStore, `n${index}`);
      expect(await a.runner.waitFor(position, 5000)).toBe(true);
      await a.election.stop();
      await a.eventStore.close();
      running = running.filter((each) => each !== a);

      await waitUntil(async () => b.election.role === 'owner', 5000);
      expect(await shared.reader.collection(PROJECTION_LEASES).findOne({ _id: PROJECTION_RUNNER })).toMatchObject({ owner: 'b', term: 2 });
      const next = await happen(b.eventStore, 'next');
      expect(await b.runner.waitFor(next, 5000)).toBe(true);
      // Nothing A applied is applied again: its last checkpoint, written as it stopped, is where B began.
      expect(b.applied).toEqual([next]);
      expect(await things(shared.reader)).toEqual(await rebuiltThings(b.eventStore));
    });

    it('rebuilds into new collections while instances serve, swaps them in, and the owner goes on from the rebuilt checkpoints', async () => {
      const a = await start('a');
      const b = await start('b');
      for (let index = 0; index < 10; index += 1) await happen(a.eventStore, `n${index % 3}`);
      await waitUntil(async () => b.runner.position === (await b.eventStore.headPosition()), 5000);

      const activity = { busy: true };
      const emptyReads: string[] = [];
      const writer = (async () => {
        for (let index = 0; activity.busy; index += 1) {
          await happen(index % 2 === 0 ? a.eventStore : b.eventStore, `w${index % 4}`);
          await sleep(10);
        }
      })();
      // No moment without documents: readers meet the old collections or the new ones.
      const reader = (async () => {
        while (activity.busy) {
          if ((await shared.reader.collection('notes').count({})) === 0) emptyReads.push('notes');
          if ((await shared.reader.collection('tallies').findOne({ _id: 'things' })) === null) emptyReads.push('tallies');
          await sleep(2);
        }
      })();
      const rebuildLog = new SqliteEventStore(logFile(dir));
      try {
        const report = await rebuildAndSwap(
          rebuildLog,
          await shared.connect(),
          thingProjections([]),
          { leaseMs: LEASE_MS, pollMs: 20 },
          new JsonLogger('silent'),
        );
        expect(report.collections.map(({ collection }) => collection)).toEqual(['notes', 'tallies', 'checkpoints']);
        await sleep(100);
      } finally {
        activity.busy = false;
        await Promise.all([writer, reader]);
      }

      await waitUntil(async () => [a, b].some((each) => each.election.role === 'owner'), 5000);
      const last = await happen(a.eventStore, 'last');
      expect(await a.runner.waitFor(last, 5000)).toBe(true);
      expect(await b.runner.waitFor(last, 5000)).toBe(true);
      expect(emptyReads).toEqual([]);
      expect(a.logged('projection lease: handing over')).toBe(true);
      expect((await shared.reader.collectionNames()).filter((name) => name.includes('__rebuild_'))).toEqual([]);
      expect(await shared.reader.collection('tallies').findOne({ _id: 'things' })).toMatchObject({ count: (await thingPositions()).length });
      expect(await things(shared.reader)).toEqual(await rebuiltThings(rebuildLog));
      await rebuildLog.close();
    });
  });
}

electionSuite('memory', async () => {
  const store = new MemoryReadStore();
  return { connect: async () => store, reader: store, cleanup: () => store.close() };
});

const url = process.env.MONGODB_URL;
if (url) {
  electionSuite('mongodb', async () => {
    // A database of its own per test, so that dropping it touches nobody else's data.
    const dbName = `${(databaseFromUrl(url) ?? 'assay_test').slice(0, 30)}_elect_${process.pid}_${Date.now().toString(36)}`.slice(0, 60);
    const connections: MongoReadStore[] = [];
    const connect = async () => {
      const store = await MongoReadStore.connect(url, dbName);
      connections.push(store);
      return store;
    };
    const reader = await connect();
    return {
      connect,
      reader,
      cleanup: async () => {
        await reader.dropAll();
        for (const store of connections) await store.close();
      },
    };
  });
} else {
  describe('projections on a shared read store (mongodb)', () => {
    process.stderr.write('MongoDB projection election skipped: MONGODB_URL is not set (see test/contract/read-store.mongodb.spec.ts).\n');
    it.skip('needs MONGODB_URL', () => undefined);
  });
}
