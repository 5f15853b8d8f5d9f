import { Binary, Collection, Db, MongoClient, MongoServerError, WriteConcern } from 'mongodb';
import { DEFAULT_RETRY_POLICY, retrying } from '#infrastructure/read-store/mongodb/mongodb-retry';
import { connectStoreClient } from '#infrastructure/read-store/mongodb/mongodb-client';
import { databaseFromUrl } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import { BlobMissing, BlobStore, requireSha256, sha256Of, verified } from '../blob-store.port';

/** Under MongoDB's 16 MiB document limit with room to spare, and few documents per blob. */
export const CHUNK_BYTES = 1024 * 1024;
const DUPLICATE_KEY_CODE = 11000;

/** A blob is whole once this document exists: it is written after every chunk. */
interface BlobDocument {
  _id: string;
  bytes: number;
  chunks: number;
  storedAt: Date;
}

interface ChunkDocument {
  _id: string;
  sha256: string;
  n: number;
  data: Binary;
}

/**
 * The production blob store: a `blobs` collection of whole-blob markers and a `blob_chunks`
 * collection of 1 MiB binary chunks, in a database of their own (`<read database>_blobs`) so
 * that dropping or rebuilding the read models never touches them. Writes are acknowledged by a
 * majority, journalled. A put writes the chunks (each an upsert of its content, so a retry, a
 * second instance putting the same bytes, or a put after a crash half-way all converge) and
 * then the marker: `has` and `get` see a blob only once it is whole. GridFS was not used: its
 * upload of a known id fails on a second put and leaves orphan chunks after a crash.
 */
export class MongoBlobStore implements BlobStore {
  private constructor(
    private readonly client: MongoClient | null,
    private readonly blobs: Collection<BlobDocument>,
    private readonly chunks: Collection<ChunkDocument>,
  ) {}

  /** Connects to `url`; the database is `dbName`, else `<the URL's database, or "assay">_blobs`. */
  static async connect(url: string, dbName?: string): Promise<MongoBlobStore> {
    // Primary reads (a lagging secondary would answer BlobMissing) and majority writes, whatever the URL says.
    const client = await connectStoreClient(url);
    try {
      return await MongoBlobStore.inDatabase(client.db(dbName ?? `${databaseFromUrl(url) ?? 'assay'}_blobs`), client);
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  /** On a database the caller opened; `owner` is closed with the store when given. */
  static async inDatabase(db: Db, owner: MongoClient | null = null): Promise<MongoBlobStore> {
    const writeConcern = new WriteConcern('majority', undefined, true);
    const chunks = db.collection<ChunkDocument>('blob_chunks', { writeConcern });
    await chunks.createIndex({ sha256: 1, n: 1 }, { unique: true });
    return new MongoBlobStore(owner, db.collection<BlobDocument>('blobs', { writeConcern }), chunks);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const sha256 = sha256Of(bytes);
    if (await this.has(sha256)) return sha256;
    const count = Math.max(1, Math.ceil(bytes.length / CHUNK_BYTES));
    for (let n = 0; n < count; n++) {
      const data = new Binary(Buffer.from(bytes.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES)));
      await this.upsert(() => this.chunks.replaceOne({ _id: `${sha256}:${n}` }, { sha256, n, data }, { upsert: true }));
    }
    await this.upsert(() => this.blobs.replaceOne({ _id: sha256 }, { bytes: bytes.length, chunks: count, storedAt: new Date() }, { upsert: true }));
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    requireSha256(sha256);
    const blob = await retrying(DEFAULT_RETRY_POLICY, () => this.blobs.findOne({ _id: sha256 }));
    if (!blob) throw new BlobMissing(sha256);
    const parts = await retrying(DEFAULT_RETRY_POLICY, () =>
      this.chunks
        .find({ sha256, n: { $lt: blob.chunks } })
        .sort({ n: 1 })
        .toArray(),
    );
    if (parts.length !== blob.chunks) throw new BlobMissing(sha256);
    return verified(sha256, Buffer.concat(parts.map((part) => Buffer.from(part.data.buffer))));
  }

  async has(sha256: string): Promise<boolean> {
    requireSha256(sha256);
    return (await retrying(DEFAULT_RETRY_POLICY, () => this.blobs.countDocuments({ _id: sha256 }, { limit: 1 }))) > 0;
  }

  async close(): Promise<void> {
    await this.client?.close();
  }

  /** Two concurrent upserts of one new _id may both try to insert: the loser's retry replaces. */
  private async upsert(write: () => Promise<unknown>): Promise<void> {
    try {
      await retrying(DEFAULT_RETRY_POLICY, write);
    } catch (error) {
      if (!(error instanceof MongoServerError) || error.code !== DUPLICATE_KEY_CODE) throw error;
      await retrying(DEFAULT_RETRY_POLICY, write);
    }
  }
}
