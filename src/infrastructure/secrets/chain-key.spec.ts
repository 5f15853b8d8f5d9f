/**
 * The audit chain's key over a real SQLite file: never at rest in clear, and kept across master-key
 * rotations so that links made before stay checkable.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VerifyAuditChainHandler } from '#modules/audit/verify-chain/verify-chain.handler';
import { VerifyAuditChain } from '#modules/audit/verify-chain/verify-chain.query';
import type { NewEvent } from '../event-store/event-store.port';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { tempDir } from '../../../test/support/temp-dirs';
import { CHAIN_KEY_KEPT, chainKeyStream, deriveChainKey } from './chain-key';
import { KeyRing } from './key-ring';
import { rewrapDataKeys } from './master-key-rotation';

function orgEvent(type: string, organization = 'acme'): NewEvent {
  const correlationId = randomUUID();
  return { id: randomUUID(), type, data: { at: randomUUID() }, metadata: { organization, actor: 'key_audit', correlationId, causationId: correlationId } };
}

/** The log as the server opens it under a master key: its chain key derived from it. */
const openUnder = (file: string, masterKey: Buffer) => SqliteEventStore.open(file, { chainKey: deriveChainKey(masterKey) });
const verify = (store: SqliteEventStore, masterKey: Buffer, organization = 'acme') =>
  new VerifyAuditChainHandler(store, new KeyRing(store, masterKey)).execute(new VerifyAuditChain(organization));

/** Every way a key's bytes could be written out as text or bytes. */
function spellings(key: Buffer): Array<string | Buffer> {
  return [key, key.toString('hex'), key.toString('base64'), key.toString('base64url'), key.toString('base64').replace(/=+$/, '')];
}

function expectNowhere(key: Buffer, places: Array<{ name: string; bytes: Buffer }>): void {
  for (const { name, bytes } of places) {
    for (const spelling of spellings(key)) expect({ name, found: bytes.includes(spelling) }).toEqual({ name, found: false });
  }
}

describe('the audit chain key', () => {
  let file: string;

  beforeEach(() => {
    file = path.join(tempDir('assay-chain-key-'), 'events.sqlite');
  });

  it('is derived from the master key, the same in every process that holds it, and another for another master key', () => {
    const masterKey = randomBytes(32);
    expect(deriveChainKey(masterKey)).toEqual(deriveChainKey(Buffer.from(masterKey)));
    expect(deriveChainKey(masterKey).id).toMatch(/^ck_[0-9a-f]{16}$/);
    expect(deriveChainKey(randomBytes(32)).id).not.toBe(deriveChainKey(masterKey).id);
    expect(deriveChainKey(masterKey).key.equals(masterKey)).toBe(false);
  });

  it('keeps earlier links checkable across master-key rotations, and a key ring without those keys reports where', async () => {
    const [first, second, third] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    let store = openUnder(file, first);
    await store.append('batch-acme', [orgEvent('BatchStarted'), orgEvent('BatchFinished')], 'no_stream');
    await new KeyRing(store, first).seal({ kind: 'variable', organization: 'acme', name: 'TOKEN' }, 'value');
    expect(await rewrapDataKeys(store, first, second)).toMatchObject({ rewrapped: 1, chainKeysKept: 1 });
    await store.close();

    store = openUnder(file, second);
    await store.append('batch-acme', [orgEvent('BatchArchived')], 1);
    const afterOne = await verify(store, second);
    expect(afterOne).toMatchObject({ ok: true, unchained: 0 });
    // The outgoing key and the one kept under it, each wrapped again under the next master key; a rerun adds nothing.
    expect(await rewrapDataKeys(store, second, third)).toMatchObject({ chainKeysKept: 2 });
    expect(await rewrapDataKeys(store, second, third)).toMatchObject({ chainKeysKept: 0, alreadyDone: 1 });
    await store.close();

    store = openUnder(file, third);
    try {
      await store.append('batch-acme', [orgEvent('BatchStarted')], 2);
      const hashes = (await store.readOrganization({ organization: 'acme', maxCount: 100 })).map((event) => event.chain?.hash.split('.')[0]);
      expect(new Set(hashes)).toEqual(new Set([deriveChainKey(first).id, deriveChainKey(second).id, deriveChainKey(third).id]));
      const report = await verify(store, third);
      expect(report).toMatchObject({ ok: true, unchained: 0, firstBreak: null });
      expect(report.checked).toBe(hashes.length);
      // A master key that never took part holds none of the keys the links name.
      expect(await verify(store, randomBytes(32))).toMatchObject({ ok: false, checked: 0, firstBreak: { reason: expect.stringContaining('does not hold') } });
    } finally {
      await store.close();
    }
  });

  it('trusts no kept key that does not open under the master key: a record written without it gives no key', async () => {
    const masterKey = randomBytes(32);
    const store = openUnder(file, randomBytes(32));
    try {
      await store.append('batch-acme', [orgEvent('BatchStarted')], 'no_stream');
      const [event] = await store.readOrganization({ organization: 'acme', maxCount: 1 });
      const keyId = event.chain?.hash.split('.')[0] as string;
      // Someone with write access, and no master key, claims the key of the links is kept under this one.
      const forged = {
        organization: 'acme',
        keyId,
        wrappedKey: randomBytes(60).toString('base64url'),
        masterKeyId: new KeyRing(store, masterKey).masterKeyId,
        keptAt: '',
      };
      await store.append(chainKeyStream('acme'), [{ ...orgEvent(CHAIN_KEY_KEPT), data: forged }], 'no_stream');
      expect(await verify(store, masterKey)).toMatchObject({
        ok: false,
        checked: 0,
        firstBreak: { reason: expect.stringContaining(`names chain key ${keyId}`) },
      });
    } finally {
      await store.close();
    }
  });

  it('is never at rest in clear: neither it nor the master key is in the log file, its write-ahead file or the events', async () => {
    const [masterKey, next] = [randomBytes(32), randomBytes(32)];
    const store = openUnder(file, masterKey);
    try {
      await store.append('batch-acme', [orgEvent('BatchStarted'), orgEvent('BatchFinished')], 'no_stream');
      await new KeyRing(store, masterKey).seal({ kind: 'variable', organization: 'acme', name: 'TOKEN' }, 'value');
      // A rotation writes the chain key down, wrapped.
      await rewrapDataKeys(store, masterKey, next);
      expect(await verify(store, next)).toMatchObject({ ok: true });
      const events = Buffer.from(JSON.stringify(await store.readAll()));
      const places = [{ name: 'events', bytes: events }, ...[file, `${file}-wal`].map((name) => ({ name, bytes: fs.readFileSync(name) }))];
      for (const key of [deriveChainKey(masterKey).key, deriveChainKey(next).key, masterKey, next]) expectNowhere(key, places);
    } finally {
      await store.close();
    }
    expectNowhere(deriveChainKey(masterKey).key, [{ name: 'closed log', bytes: fs.readFileSync(file) }]);
  });
});
