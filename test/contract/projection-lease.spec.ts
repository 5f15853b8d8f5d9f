import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { MongoReadStore } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import { mongoTargets, noTarget, ownDatabase } from '../support/mongodb-targets';
import { projectionLeaseContract } from './projection-lease.contract';

projectionLeaseContract('memory', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});

// Each test races or fences conditional updates, which FerretDB v1 does not make atomic.
const targets = mongoTargets('The projection lease contract', ['atomicConditionalUpdates']);
for (const target of targets) {
  projectionLeaseContract(target.name, async () => {
    // A database of its own per test, so that dropping it cannot touch anyone else's data.
    const database = ownDatabase('lease');
    const store = await MongoReadStore.connect(target.url(database), database);
    return {
      store,
      cleanup: async () => {
        await store.dropAll();
        await store.close();
      },
    };
  });
}
if (targets.length === 0) noTarget('Projection lease contract: mongodb');
