/**
 * The behaviour every BlobStore adapter must show, as a jest suite; each adapter's spec calls
 * `blobStoreContract` with a factory. Contents are random per test, so the suite also runs
 * against a shared MongoDB holding blobs of earlier runs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { BlobMissing, BlobStore } from '#infrastructure/blob-store/blob-store.port';

export interface OpenedBlobStore {
  store: BlobStore;
  /** A second, independent store on the same storage (another process, in production). */
  reopen: () => Promise<BlobStore>;
  cleanup: () => Promise<void>;
}

const hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export function blobStoreContract(adapter: string, open: () => Promise<OpenedBlobStore>): void {
  describe(`BlobStore contract: ${adapter}`, () => {
    let opened: OpenedBlobStore;
    beforeEach(async () => {
      opened = await open();
    });
    afterEach(async () => {
      await opened.cleanup();
    });

    it('answers the SHA-256 of the bytes put, and gives the same bytes back', async () => {
      const bytes = randomBytes(10_000);
      const sha256 = await opened.store.put(bytes);
      expect(sha256).toBe(hex(bytes));
      expect(await opened.store.has(sha256)).toBe(true);
      expect((await opened.store.get(sha256)).equals(bytes)).toBe(true);
    });

    it('keeps empty and multi-megabyte blobs whole', async () => {
      const large = randomBytes(3 * 1024 * 1024 + 17);
      const [emptySha, largeSha] = [await opened.store.put(Buffer.alloc(0)), await opened.store.put(large)];
      expect((await opened.store.get(emptySha)).length).toBe(0);
      expect((await opened.store.get(largeSha)).equals(large)).toBe(true);
    });

    it('stores the same bytes once however often, or however concurrently, they are put', async () => {
      const bytes = randomBytes(50_000);
      const other = await opened.reopen();
      try {
        const names = await Promise.all([opened.store.put(bytes), other.put(bytes), opened.store.put(Buffer.from(bytes))]);
        expect(new Set(names).size).toBe(1);
        expect((await other.get(names[0])).equals(bytes)).toBe(true);
      } finally {
        await other.close();
      }
    });

    it('a blob put is seen by another store on the same storage, and after reopening', async () => {
      const bytes = Buffer.from(`visible ${randomBytes(8).toString('hex')}`);
      const sha256 = await opened.store.put(bytes);
      await opened.store.close();
      const reopened = await opened.reopen();
      opened = { ...opened, store: reopened };
      expect((await reopened.get(sha256)).toString()).toBe(bytes.toString());
    });

    it('answers BlobMissing for an unknown hash, and false from has', async () => {
      const unknown = hex(randomBytes(16));
      expect(await opened.store.has(unknown)).toBe(false);
      await expect(opened.store.get(unknown)).rejects.toBeInstanceOf(BlobMissing);
    });

    it('refuses a name that is not a SHA-256 (no path or query can be smuggled in)', async () => {
      await expect(opened.store.get('../../events.sqlite')).rejects.toThrow(/not a SHA-256/);
      await expect(opened.store.has('A'.repeat(64))).rejects.toThrow(/not a SHA-256/);
    });
  });
}
