import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EventStore } from '../event-store/event-store.port';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { SecretUnreadable } from './aes-gcm';
import { KeyRing } from './key-ring';

describe('the key ring: files sealed as a stream under the data key', () => {
  let dir: string;
  let store: EventStore;
  const artifact = (organization: string, sha256 = 'ab'.repeat(32)) => ({ kind: 'artifact' as const, organization, sha256 });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-sealed-files-'));
    store = new SqliteEventStore(path.join(dir, 'events.sqlite'));
  });

  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function sealInChunks(ring: KeyRing, organization: string, content: Buffer): Promise<Buffer> {
    const sealing = await ring.startSealingFile(artifact(organization));
    const parts = [sealing.header];
    for (let offset = 0; offset < content.length; offset += 1000) parts.push(sealing.update(content.subarray(offset, offset + 1000)));
    return Buffer.concat([...parts, sealing.final()]);
  }

  it('opens what it sealed chunk by chunk, and the ciphertext holds no plaintext', async () => {
    const ring = new KeyRing(store, randomBytes(32));
    const content = Buffer.from('token=plain-text-marker\n'.repeat(200));
    const sealed = await sealInChunks(ring, 'acme', content);
    expect(sealed.includes('plain-text-marker')).toBe(false);
    expect(sealed.subarray(0, 3).toString()).toBe('v1.');
    expect((await ring.openFile(artifact('acme'), sealed)).equals(content)).toBe(true);
  });

  it('refuses another organization, another hash, another master key and any altered byte', async () => {
    const master = randomBytes(32);
    const ring = new KeyRing(store, master);
    const sealed = await sealInChunks(ring, 'acme', Buffer.from('some artifact content'));
    await ring.seal({ kind: 'variable', organization: 'globex', name: 'X' }, 'globex-value');
    await expect(ring.openFile(artifact('globex'), sealed)).rejects.toThrow(SecretUnreadable);
    await expect(ring.openFile(artifact('acme', 'cd'.repeat(32)), sealed)).rejects.toThrow(SecretUnreadable);
    await expect(new KeyRing(store, randomBytes(32)).openFile(artifact('acme'), sealed)).rejects.toThrow(SecretUnreadable);
    for (const index of [23, 30, sealed.length - 1]) {
      const altered = Buffer.from(sealed);
      altered[index] ^= 1;
      await expect(ring.openFile(artifact('acme'), altered)).rejects.toThrow(SecretUnreadable);
    }
    await expect(ring.openFile(artifact('acme'), Buffer.from('not sealed at all, just text'))).rejects.toThrow(SecretUnreadable);
  });
});
