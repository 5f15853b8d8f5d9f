import * as fs from 'node:fs';
import * as path from 'node:path';
import { blobStoreContract } from './blob-store.contract';
import { BlobCorrupted } from '#infrastructure/blob-store/blob-store.port';
import { FileBlobStore } from '#infrastructure/blob-store/file/file-blob-store';
import { tempDir } from '../support/temp-dirs';

blobStoreContract('file', async () => {
  const dataDir = tempDir('assay-blobs-');
  return {
    store: FileBlobStore.inDataDirectory(dataDir),
    reopen: async () => FileBlobStore.inDataDirectory(dataDir),
    cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  };
});

describe('FileBlobStore at rest', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = tempDir('assay-blobs-');
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('keeps a blob at blobs/ab/cdef… readable by the owner only, with no temporary file left', async () => {
    const store = FileBlobStore.inDataDirectory(dataDir);
    const sha256 = await store.put(Buffer.from('x'.repeat(5000)));
    const file = path.join(dataDir, 'blobs', sha256.slice(0, 2), sha256.slice(2));
    expect(fs.readFileSync(file, 'utf8')).toBe('x'.repeat(5000));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(path.dirname(file))).toEqual([sha256.slice(2)]);
  });

  it('answers BlobCorrupted for a blob whose bytes were changed at rest', async () => {
    const store = FileBlobStore.inDataDirectory(dataDir);
    const sha256 = await store.put(Buffer.from('the original content'));
    fs.writeFileSync(path.join(dataDir, 'blobs', sha256.slice(0, 2), sha256.slice(2)), 'tampered');
    await expect(store.get(sha256)).rejects.toBeInstanceOf(BlobCorrupted);
  });
});
