import { projectionLeaseContract } from './projection-lease.contract';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { MongoReadStore, databaseFromUrl } from '#infrastructure/read-store/mongodb/mongodb-read-store';

projectionLeaseContract('memory', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});

const url = process.env.MONGODB_URL;

if (url) {
  // A database of its own per run, so that dropping it cannot touch anyone else's data.
  const dbName = `${(databaseFromUrl(url) ?? 'assay_test').slice(0, 30)}_lease_${process.pid}_${Date.now().toString(36)}`;
  projectionLeaseContract('mongodb', async () => {
    const store = await MongoReadStore.connect(url, dbName.slice(0, 60));
    return {
      store,
      cleanup: async () => {
        await store.dropAll();
        await store.close();
      },
    };
  });
} else {
  describe('Projection lease contract: mongodb', () => {
    process.stderr.write('MongoDB projection lease contract skipped: MONGODB_URL is not set (see test/contract/read-store.mongodb.spec.ts).\n');
    it.skip('needs MONGODB_URL', () => undefined);
  });
}
