/**
 * The ReadStore contracts on MongoDB over the real driver: against the server MONGODB_URL names,
 * and against FerretDB started for this file (a MongoDB wire-protocol server on SQLite), where
 * the tests needing what FerretDB v1 lacks skip, saying why. Each opening gets a database of its
 * own, dropped afterwards.
 */
import { MongoReadStore } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import { mongoTargets, noTarget, ownDatabase } from '../support/mongodb-targets';
import { collectionSwapContract } from './collection-swap.contract';
import { readStoreCostsContract } from './read-store-costs.contract';
import { guardedWritesContract, readStoreContract } from './read-store.contract';

const targets = mongoTargets('The MongoDB ReadStore contract');

for (const target of targets) {
  const open = (label: string) => async () => {
    const database = ownDatabase(label);
    const store = await MongoReadStore.connect(target.url(database), database);
    return {
      store,
      cleanup: async () => {
        await store.dropAll();
        await store.close();
      },
    };
  };
  readStoreContract(target.name, open('rs'), target.lacks);
  // As a projection owner writes it: a fence before every attempt, each attempt bounded (timeoutMS).
  const owner = (label: string) => async () => {
    const opened = await open(label)();
    return { ...opened, store: opened.store.guardedBy(() => 60_000) };
  };
  readStoreContract(`${target.name}, writes guarded by a projection owner's fence`, owner('rs_o'), target.lacks);
  guardedWritesContract(target.name, open('rs_g'));
  collectionSwapContract(target.name, open('rs_s'), target.lacks);
  readStoreCostsContract(target.name, open('rs_c'));
}
if (targets.length === 0) noTarget('ReadStore contract: mongodb');
