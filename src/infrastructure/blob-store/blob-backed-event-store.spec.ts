import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BlobBackedEventStore } from './blob-backed-event-store';
import { isBlobReference } from './blob-references';
import { FileBlobStore } from './file/file-blob-store';
import { EventTooLarge, MAX_EVENT_BYTES, NewEvent, RecordedEvent, WrongExpectedVersion } from '../event-store/event-store.port';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { tempDir } from '../../../test/support/temp-dirs';

const metadata = { organization: 'org-blobs', actor: 'system:test', correlationId: 'c', causationId: 'c' };
const event = (data: unknown, type = 'SampleRecorded'): NewEvent => ({ id: randomUUID(), type, data, metadata });
const storedBytes = (recorded: RecordedEvent) => Buffer.byteLength(JSON.stringify({ type: recorded.type, data: recorded.data, metadata: recorded.metadata }));

describe('BlobBackedEventStore (SQLite log, blobs in the data directory)', () => {
  let dataDir: string;
  let log: SqliteEventStore;
  let store: BlobBackedEventStore;

  beforeEach(() => {
    dataDir = tempDir('assay-blob-events-');
    log = new SqliteEventStore(path.join(dataDir, 'events.sqlite'));
    store = new BlobBackedEventStore(log, FileBlobStore.inDataDirectory(dataDir));
  });
  afterEach(async () => {
    await store.close();
  });

  it('keeps a string over 4 KiB as a blob reference in the log and gives the string back on every read', async () => {
    const source = 'line of source\n'.repeat(70_000);
    const data = { name: 'small stays inline', files: { 'main.ts': source, 'tiny.ts': 'x' } };
    await store.append('sample-1', [event(data)], 'no_stream');

    const [raw] = await log.readStream('sample-1');
    const stored = raw.data as { name: string; files: Record<string, unknown> };
    expect(stored.name).toBe('small stays inline');
    expect(stored.files['tiny.ts']).toBe('x');
    expect(isBlobReference(stored.files['main.ts'])).toBe(true);
    expect(storedBytes(raw)).toBeLessThan(1000);
    const sha256 = (stored.files['main.ts'] as { $blob: string }).$blob;
    expect(fs.readFileSync(path.join(dataDir, 'blobs', sha256.slice(0, 2), sha256.slice(2)), 'utf8')).toBe(source);

    expect((await store.readStream('sample-1'))[0].data).toEqual(data);
    expect((await store.readAll())[0].data).toEqual(data);
    const subscription = store.subscribeToAll();
    for await (const delivered of subscription) {
      expect(delivered.data).toEqual(data);
      break;
    }
    await subscription.close();
  });

  it('stores appends in the order they were made: a small one never overtakes one whose values go to the blob store', async () => {
    // The large one is made first and goes to the blob store (file writes) before its append; the
    // small ones after it need nothing, yet must not reach the log first.
    expect(store.appendsInCallOrder).toBe(true);
    const large = store.append('order-large', [event({ output: 'a'.repeat(200_000) })], 'no_stream');
    const small = store.append('order-small', [event({ note: 'small' })], 'no_stream');
    const refused = store.append('order-small', [event({ note: 'refused' })], 'no_stream');
    const after = store.append('order-after', [event({ note: 'after the refused one' })], 'no_stream');
    const [first, second] = await Promise.all([large, small]);
    await expect(refused).rejects.toBeInstanceOf(WrongExpectedVersion);
    const third = await after;
    expect(first.position).toBeLessThan(second.position);
    expect(second.position).toBeLessThan(third.position);
    expect((await log.readAll()).map((recorded) => recorded.streamName)).toEqual(['order-large', 'order-small', 'order-after']);
  });

  it('leaves the data the caller appended as it was', async () => {
    const data = { output: 'y'.repeat(10_000) };
    await store.append('sample-2', [event(data)], 'no_stream');
    expect(data.output).toBe('y'.repeat(10_000));
  });

  it('reads events stored inline before blobs existed as they are', async () => {
    const old = { output: 'z'.repeat(100_000), nested: [{ text: 'w'.repeat(5000) }] };
    await log.append('sample-3', [event(old)], 'no_stream');
    expect((await store.readStream('sample-3'))[0].data).toEqual(old);
  });

  it('moves out the largest objects of an event made of many medium strings until it fits', async () => {
    const cases = Array.from({ length: 300 }, (_, index) => ({ id: `case-${index}`, prompt: `${index} `.padEnd(3000, 'p') }));
    const data = { batchId: 'b', cases };
    await store.append('sample-4', [event(data)], 'no_stream');
    const [raw] = await log.readStream('sample-4');
    expect(storedBytes(raw)).toBeLessThanOrEqual(MAX_EVENT_BYTES);
    expect((raw.data as { batchId: string }).batchId).toBe('b');
    expect((await store.readStream('sample-4'))[0].data).toEqual(data);
  });

  it('refuses with EventTooLarge an event that cannot be brought under 512 KiB, and stores nothing of the append', async () => {
    const wide = Object.fromEntries(Array.from({ length: 60_000 }, (_, index) => [`key-${index}`, 'a small value']));
    const append = store.append('sample-5', [event({ ok: true }), event(wide)], 'no_stream');
    await expect(append).rejects.toBeInstanceOf(EventTooLarge);
    await expect(append).rejects.toThrow(/exceeds the limit of 524288 bytes per event/);
    expect(await log.readStream('sample-5')).toEqual([]);
  });

  it('answers the audit trail as stored: references, which its hash chain covers', async () => {
    await store.append('sample-6', [event({ output: 'q'.repeat(8000) })], 'no_stream');
    const [audited] = await store.readOrganization({ organization: 'org-blobs', maxCount: 10, stream: 'sample-6' });
    expect(isBlobReference((audited.data as { output: unknown }).output)).toBe(true);
    expect(audited.chain).not.toBeNull();
  });

  it('an event naming a blob the store lacks fails its read with BlobMissing (never a silent empty value)', async () => {
    await store.append('sample-7', [event({ output: 'm'.repeat(8000) })], 'no_stream');
    fs.rmSync(path.join(dataDir, 'blobs'), { recursive: true });
    const fresh = new BlobBackedEventStore(new SqliteEventStore(path.join(dataDir, 'events.sqlite')), FileBlobStore.inDataDirectory(dataDir));
    await expect(fresh.readStream('sample-7')).rejects.toThrow(/is missing from the blob store/);
    await fresh.close();
  });
});
