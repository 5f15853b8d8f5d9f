/**
 * Renaming and dropping collections, as `assay projections rebuild` uses them to put rebuilt
 * read models in place while servers read the old ones: shared by every ReadStore adapter.
 */
import type { OpenedReadStore } from './read-store.contract';
import { DuplicateKey } from '#infrastructure/read-store/read-store.port';
import { itNeeding, Lacks } from '../support/mongodb-targets';

export function collectionSwapContract(adapterName: string, open: () => Promise<OpenedReadStore>, lacks: Lacks = {}): void {
  describe(`ReadStore contract, collection swap: ${adapterName}`, () => {
    const prefix = `swap_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    let opened: OpenedReadStore;
    let counter = 0;
    const name = (label: string) => `${prefix}_${label}_${++counter}`;
    const ids = async (collection: string) => (await opened.store.collection(collection).find({}, { sort: { _id: 1 } })).map((doc) => doc._id);

    beforeEach(async () => {
      opened = await open();
    });
    afterEach(() => opened.cleanup());
    const swapping = itNeeding(lacks, 'renameWithDropTarget');

    swapping('moves a collection onto another: its documents replace the old ones, and the source is gone', async () => {
      const [live, rebuilt] = [name('live'), name('rebuilt')];
      const handle = opened.store.collection(live);
      await handle.insertOne({ _id: 'old-1', v: 1 });
      await handle.insertOne({ _id: 'old-2', v: 2 });
      await opened.store.collection(rebuilt).insertOne({ _id: 'new-1', v: 10 });

      await opened.store.renameCollection(rebuilt, live);

      expect(await ids(live)).toEqual(['new-1']);
      // A handle taken before the swap reads the new documents: readers never keep the old ones.
      expect(await handle.findOne({ _id: 'new-1' })).toEqual({ _id: 'new-1', v: 10 });
      expect(await handle.count({})).toBe(1);
      const names = await opened.store.collectionNames();
      expect(names).toContain(live);
      expect(names).not.toContain(rebuilt);
    });

    swapping('keeps the source indexes: a unique index of the rebuilt collection holds under the new name', async () => {
      const [live, rebuilt] = [name('live'), name('rebuilt')];
      await opened.store.collection(live).insertOne({ _id: 'a', key: 'x' });
      await opened.store.ensureIndexes(rebuilt, [{ keys: { key: 1 }, unique: true }]);
      await opened.store.collection(rebuilt).insertOne({ _id: 'b', key: 'y' });

      await opened.store.renameCollection(rebuilt, live);

      await expect(opened.store.collection(live).insertOne({ _id: 'c', key: 'y' })).rejects.toBeInstanceOf(DuplicateKey);
      await opened.store.collection(live).insertOne({ _id: 'd', key: 'x' });
      expect(await ids(live)).toEqual(['b', 'd']);
    });

    swapping('moves onto a name that holds nothing yet', async () => {
      const [fresh, rebuilt] = [name('fresh'), name('rebuilt')];
      await opened.store.collection(rebuilt).insertOne({ _id: 'n' });
      await opened.store.renameCollection(rebuilt, fresh);
      expect(await ids(fresh)).toEqual(['n']);
      expect(await ids(rebuilt)).toEqual([]);
    });

    swapping('refuses to move a collection that does not exist, and leaves the target as it was', async () => {
      const [live, missing] = [name('live'), name('missing')];
      await opened.store.collection(live).insertOne({ _id: 'kept' });
      await expect(opened.store.renameCollection(missing, live)).rejects.toThrow();
      expect(await ids(live)).toEqual(['kept']);
    });

    it('drops one collection and leaves the others; dropping one that is not there is no error', async () => {
      const [dropped, kept] = [name('dropped'), name('kept')];
      await opened.store.collection(dropped).insertOne({ _id: 'gone' });
      await opened.store.collection(kept).insertOne({ _id: 'stays' });
      await opened.store.dropCollection(dropped);
      await opened.store.dropCollection(name('never'));
      expect(await ids(dropped)).toEqual([]);
      expect(await ids(kept)).toEqual(['stays']);
      const names = await opened.store.collectionNames();
      expect(names).not.toContain(dropped);
      expect(names).toContain(kept);
    });
  });
}
