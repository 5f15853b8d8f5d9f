import { MongoReadStore, databaseFromUrl } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import { collectionSwapContract } from './collection-swap.contract';
import { guardedWritesContract, readStoreContract } from './read-store.contract';

const url = process.env.MONGODB_URL;

if (url) {
  // A database of its own per run, so dropAll cannot touch another run's (or anyone's) data.
  const base = databaseFromUrl(url) ?? 'assay_test';
  const dbName = `${base.slice(0, 30)}_${process.pid}_${Date.now().toString(36)}`;
  const open = (suffix: string) => async () => {
    const store = await MongoReadStore.connect(url, `${dbName.slice(0, 50)}${suffix}`);
    return {
      store,
      cleanup: async () => {
        await store.dropAll();
        await store.close();
      },
    };
  };
  readStoreContract('mongodb', open(''));
  guardedWritesContract('mongodb', open('_g'));
  collectionSwapContract('mongodb', open('_s'));
} else {
  describe('ReadStore contract: mongodb', () => {
    process.stderr.write(
      'MongoDB contract skipped: MONGODB_URL is not set (e.g. mongodb://USER:PASSWORD@localhost:27017/assay_test?authSource=admin, the user of .env, with docker compose -f docker-compose.yml -f docker-compose.contract.yml up -d mongodb).\n',
    );
    it.skip('needs MONGODB_URL', () => undefined);
  });
}
