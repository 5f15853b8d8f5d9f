/**
 * The BlobStore contract on MongoDB over the real driver: against MONGODB_URL's server and
 * against FerretDB started for this file, each in a database of its own, dropped afterwards.
 */
import { MongoClient } from 'mongodb';
import { MongoBlobStore } from '#infrastructure/blob-store/mongodb/mongodb-blob-store';
import { mongoTargets, noTarget, ownDatabase } from '../support/mongodb-targets';
import { blobStoreContract } from './blob-store.contract';

const targets = mongoTargets('The MongoDB BlobStore contract');

for (const target of targets) {
  blobStoreContract(target.name, async () => {
    const database = ownDatabase('blobs');
    const url = target.url(database);
    // Every store opened is closed at the end: an open client would keep the test file running.
    const opened: MongoBlobStore[] = [];
    const connect = async () => {
      const store = await MongoBlobStore.connect(url, database);
      opened.push(store);
      return store;
    };
    return {
      store: await connect(),
      reopen: connect,
      cleanup: async () => {
        const client = await MongoClient.connect(url);
        await client.db(database).dropDatabase();
        await client.close();
        await Promise.all(opened.map((store) => store.close()));
      },
    };
  });
}
if (targets.length === 0) noTarget('BlobStore contract: mongodb');
