import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EventStore } from '../event-store/event-store.port';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '../logging/json-logger';
import { openBytes, sealBytes, SecretUnreadable } from './aes-gcm';
import { bindingText, SecretBinding } from './bindings';
import { dataKeyStream } from './data-key.decider';
import { KeyRing } from './key-ring';
import { masterKeyId, masterKeyPath, withMasterKey } from './master-key';
import { sha256Hex } from '#shared/hash';
import { rewrapDataKeys } from './master-key-rotation';
import { loadConfig } from '../../config';
import { tempDir } from '../../../test/support/temp-dirs';

const connection = (organization: string, connectionId = 'con_1', integrationId = 'openai-compatible'): SecretBinding => ({
  kind: 'connection',
  organization,
  connectionId,
  integrationId,
  authMethodId: 'api-key',
});

describe('AES-256-GCM sealing', () => {
  const key = randomBytes(32);

  it('opens what it sealed, with the same key and binding', () => {
    const sealed = sealBytes(key, Buffer.from('sk-live-123'), 'binding');
    expect(openBytes(key, sealed, 'binding').toString()).toBe('sk-live-123');
    expect(sealed.includes(Buffer.from('sk-live-123'))).toBe(false);
    // A fresh nonce each time: the same value never seals the same way twice.
    expect(sealBytes(key, Buffer.from('sk-live-123'), 'binding').equals(sealed)).toBe(false);
  });

  it('refuses another key, another binding, and any altered byte', () => {
    const sealed = sealBytes(key, Buffer.from('value'), 'binding');
    expect(() => openBytes(randomBytes(32), sealed, 'binding')).toThrow(SecretUnreadable);
    expect(() => openBytes(key, sealed, 'other binding')).toThrow(SecretUnreadable);
    for (const index of [0, 12, sealed.length - 1]) {
      const altered = Buffer.from(sealed);
      altered[index] ^= 1;
      expect(() => openBytes(key, altered, 'binding')).toThrow(SecretUnreadable);
    }
    expect(() => openBytes(key, sealed.subarray(0, 10), 'binding')).toThrow(SecretUnreadable);
  });

  it("binds a ciphertext to its organization: under the same data key, another organization's binding does not open it", () => {
    const sealed = sealBytes(key, Buffer.from('{"apiKey":"sk"}'), bindingText(connection('acme')));
    expect(() => openBytes(key, sealed, bindingText(connection('globex')))).toThrow(SecretUnreadable);
    expect(() => openBytes(key, sealed, bindingText(connection('acme', 'con_2')))).toThrow(SecretUnreadable);
    expect(() => openBytes(key, sealed, bindingText(connection('acme', 'con_1', 'anthropic')))).toThrow(SecretUnreadable);
    expect(openBytes(key, sealed, bindingText(connection('acme'))).toString()).toBe('{"apiKey":"sk"}');
  });
});

describe('the key ring: per-organization data keys wrapped by the master key', () => {
  let dir: string;
  let store: EventStore;

  beforeEach(() => {
    dir = tempDir('assay-crypto-');
    store = new SqliteEventStore(path.join(dir, 'events.sqlite'));
  });

  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('seals and opens, creating one data key per organization that the log holds only wrapped', async () => {
    const master = randomBytes(32);
    const ring = new KeyRing(store, master);
    const sealed = await Promise.all([1, 2, 3].map((n) => ring.seal(connection('acme', `con_${n}`), `secret-${n}`)));
    expect(await ring.open(connection('acme', 'con_2'), sealed[1])).toBe('secret-2');
    const events = await store.readStream(dataKeyStream('acme'));
    expect(events.map((event) => event.type)).toEqual(['DataKeyCreated']);
    expect(events[0].data).toMatchObject({ organization: 'acme', masterKeyId: masterKeyId(master) });
    // Another process with the same master key opens it from the log alone.
    expect(await new KeyRing(store, master).open(connection('acme', 'con_3'), sealed[2])).toBe('secret-3');
  });

  it("does not open a ciphertext moved to another organization's connection", async () => {
    const ring = new KeyRing(store, randomBytes(32));
    const sealed = await ring.seal(connection('acme'), '{"apiKey":"sk-acme"}');
    await ring.seal(connection('globex'), '{"apiKey":"sk-globex"}');
    await expect(ring.open(connection('globex'), sealed)).rejects.toThrow(SecretUnreadable);
    await expect(ring.open(connection('globex', 'con_9'), sealed)).rejects.toThrow(SecretUnreadable);
    await expect(ring.open({ kind: 'variable', organization: 'globex', name: 'API_KEY' }, sealed)).rejects.toThrow(SecretUnreadable);
    // Within the organization too: another connection or a variable does not open it.
    await expect(ring.open(connection('acme', 'con_2'), sealed)).rejects.toThrow(SecretUnreadable);
    await expect(ring.open({ kind: 'variable', organization: 'acme', name: 'API_KEY' }, sealed)).rejects.toThrow(SecretUnreadable);
    expect(await ring.open(connection('acme'), sealed)).toBe('{"apiKey":"sk-acme"}');
  });

  it('refuses to open with another master key', async () => {
    const sealed = await new KeyRing(store, randomBytes(32)).seal(connection('acme'), 'value');
    await expect(new KeyRing(store, randomBytes(32)).open(connection('acme'), sealed)).rejects.toThrow(/wrapped by master key mk_/);
  });

  it('re-wraps data keys under a new master key without touching sealed values', async () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const sealed = await new KeyRing(store, oldKey).seal(connection('acme'), 'value');
    await new KeyRing(store, oldKey).seal({ kind: 'variable', organization: 'globex', name: 'TOKEN' }, 'other');
    const report = await rewrapDataKeys(store, oldKey, newKey);
    expect(report).toMatchObject({ organizations: 2, rewrapped: 2, alreadyDone: 0, from: masterKeyId(oldKey), to: masterKeyId(newKey) });
    expect(await new KeyRing(store, newKey).open(connection('acme'), sealed)).toBe('value');
    await expect(new KeyRing(store, oldKey).open(connection('acme'), sealed)).rejects.toThrow(SecretUnreadable);
    // Run again (an interrupted rotation): nothing left to do.
    expect(await rewrapDataKeys(store, oldKey, newKey)).toMatchObject({ rewrapped: 0, alreadyDone: 2 });
  });
});

describe('the master key file of the embedded default', () => {
  it('is generated with mode 0600, announced in the log, and read again at the next start', () => {
    const dataDir = tempDir('assay-master-');
    const lines: string[] = [];
    const logger = new JsonLogger('debug', (line) => lines.push(line));
    const config = loadConfig({ ASSAY_DATA_DIR: dataDir });
    const first = withMasterKey(config, logger);
    const file = masterKeyPath(dataDir);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(lines.some((line) => line.includes('generated a master key'))).toBe(true);
    expect(lines.join('\n')).not.toContain(first.masterKey!.toString('base64'));
    const second = withMasterKey(config, new JsonLogger('silent'));
    expect(second.masterKey!.equals(first.masterKey!)).toBe(true);
    const given = randomBytes(32);
    expect(withMasterKey(loadConfig({ ASSAY_DATA_DIR: dataDir, ASSAY_MASTER_KEY: given.toString('base64') }), logger).masterKey).toEqual(given);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});

describe('sha256Hex', () => {
  it('gives the standard digests for text and bytes alike (the FIPS 180-2 "abc" vector, and the empty input)', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(Buffer.from('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
