import { blobStoreContract } from './blob-store.contract';
import { MongoBlobStore } from '#infrastructure/blob-store/mongodb/mongodb-blob-store';
import { databaseFromUrl } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import { MongoClient } from 'mongodb';

const url = process.env.MONGODB_URL;

if (url) {
  // A database of its own per run, dropped afterwards.
  const base = databaseFromUrl(url) ?? 'assay_test';
  const dbName = `${base.slice(0, 30)}_blobs_${process.pid}_${Date.now().toString(36)}`;
  blobStoreContract('mongodb', async () => ({
    store: await MongoBlobStore.connect(url, dbName),
    reopen: () => MongoBlobStore.connect(url, dbName),
    cleanup: async () => {
      const client = await MongoClient.connect(url);
      await client.db(dbName).dropDatabase();
      await client.close();
    },
  }));
} else {
  describe('BlobStore contract: mongodb', () => {
    process.stderr.write('MongoDB blob store contract skipped: MONGODB_URL is not set (see test/contract/read-store.mongodb.spec.ts).\n');
    it.skip('needs MONGODB_URL', () => undefined);
  });
}
