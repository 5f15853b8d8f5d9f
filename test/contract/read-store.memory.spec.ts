import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { collectionSwapContract } from './collection-swap.contract';
import { readStoreCostsContract } from './read-store-costs.contract';
import { guardedWritesContract, readStoreContract } from './read-store.contract';

readStoreContract('memory', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});

guardedWritesContract('memory', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});

collectionSwapContract('memory', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});

readStoreCostsContract('memory', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});
