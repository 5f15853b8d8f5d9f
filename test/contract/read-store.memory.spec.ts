import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { collectionSwapContract } from '#infrastructure/read-store/collection-swap.contract';
import { guardedWritesContract, readStoreContract } from '#infrastructure/read-store/read-store.contract';

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
