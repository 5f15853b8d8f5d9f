/**
 * The organizations' chains in the SQLite log, as audit.verify checks them over a real file: keyed
 * links, the head table that shows the newest rows deleted, and rows written straight into the
 * file by someone without the key.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { VerifyAuditChainHandler } from '#modules/audit/verify-chain/verify-chain.handler';
import { VerifyAuditChain } from '#modules/audit/verify-chain/verify-chain.query';
import { ChainKey, eventHash, keyedEventHash } from '#shared/event-chain';
import { deriveChainKey } from '../../secrets/chain-key';
import { KeyRing } from '../../secrets/key-ring';
import { tempDir } from '../../../../test/support/temp-dirs';
import { NewEvent, WrongExpectedVersion } from '../event-store.port';
import { SqliteEventStore } from './sqlite-event-store';
import type { EventRow } from './sqlite-rows';

const masterKey = randomBytes(32);
const chainKey = deriveChainKey(masterKey);

function orgEvent(type: string, organization = 'acme'): NewEvent {
  const correlationId = randomUUID();
  return { id: randomUUID(), type, data: { at: randomUUID() }, metadata: { organization, actor: 'key_audit', correlationId, causationId: correlationId } };
}

const open = (file: string, key: ChainKey | null = chainKey) => SqliteEventStore.open(file, key ? { chainKey: key } : {});
const verify = (store: SqliteEventStore, organization = 'acme') =>
  new VerifyAuditChainHandler(store, new KeyRing(store, masterKey)).execute(new VerifyAuditChain(organization));

/** The file as someone with write access to it, and no key, changes it. */
function withFile(file: string, change: (db: Database.Database) => void): void {
  const db = new Database(file);
  try {
    change(db);
  } finally {
    db.close();
  }
}

interface Row extends EventRow {
  hash: string;
}

/** A row after the organization's last one, linked to it by a well-formed hash of the caller's making (and the head moved to it). */
function forgeRow(file: string, organization: string, linkOf: (fields: Parameters<typeof eventHash>[0], prevHash: string) => string): void {
  withFile(file, (db) => {
    const last = db.prepare<[string], Row>('SELECT * FROM events WHERE organization = ? ORDER BY position DESC LIMIT 1').get(organization) as Row;
    const forged = { id: randomUUID(), type: 'ApiKeyIssued', streamName: last.stream, revision: last.revision + 1, createdAt: last.created_at };
    const data = { name: 'forged', permissions: ['admin'] };
    const metadata = JSON.parse(last.metadata) as unknown;
    const hash = linkOf({ ...forged, data, metadata }, last.hash);
    const inserted = db
      .prepare(
        'INSERT INTO events (id, stream, revision, type, data, metadata, created_at, organization, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(forged.id, forged.streamName, forged.revision, forged.type, JSON.stringify(data), last.metadata, forged.createdAt, organization, last.hash, hash);
    db.prepare('UPDATE chain_heads SET hash = ?, position = ?, revision = ? WHERE organization = ?').run(
      hash,
      Number(inserted.lastInsertRowid),
      forged.revision,
      organization,
    );
  });
}

describe('the audit chain in the SQLite log', () => {
  let file: string;

  beforeEach(() => {
    file = path.join(tempDir('assay-sqlite-chain-'), 'events.sqlite');
  });

  it('links each event under the chain key, which names itself in the hash', async () => {
    const store = open(file);
    try {
      await store.append('prompt-acme.p', [orgEvent('PromptVersionCreated'), orgEvent('PromptChannelPromoted')], 'no_stream');
      const events = await store.readOrganization({ organization: 'acme', maxCount: 10 });
      expect(events.map((event) => event.chain?.hash)).toEqual([expect.stringMatching(new RegExp(`^${chainKey.id}\\.[0-9a-f]{64}$`)), expect.any(String)]);
      expect(events[1].chain?.hash).toBe(keyedEventHash(chainKey, events[1], events[0].chain?.hash ?? null));
      expect(await verify(store)).toEqual({ ok: true, checked: 2, unchained: 0, firstBreak: null });
    } finally {
      await store.close();
    }
  });

  it('reports a row written into the file without the key, whether its link is a valid sha256 or a keyed-looking forgery', async () => {
    const store = open(file);
    try {
      await store.append('apikey-acme', [orgEvent('ApiKeyIssued'), orgEvent('ApiKeyRevoked')], 'no_stream');
      await store.append('apikey-globex', [orgEvent('ApiKeyIssued', 'globex')], 'no_stream');
      forgeRow(file, 'acme', (fields, prevHash) => eventHash(fields, prevHash));
      forgeRow(file, 'globex', (fields, prevHash) => keyedEventHash({ id: chainKey.id, key: randomBytes(32) }, fields, prevHash));
      const acme = await verify(store);
      expect(acme).toMatchObject({
        ok: false,
        checked: 2,
        firstBreak: { stream: 'apikey-acme', revision: 2, reason: expect.stringContaining('carries no key') },
      });
      const globex = await verify(store, 'globex');
      expect(globex).toMatchObject({
        ok: false,
        checked: 1,
        firstBreak: { stream: 'apikey-globex', revision: 1, reason: expect.stringContaining('does not match') },
      });
    } finally {
      await store.close();
    }
  });

  it('verifies links stored before the chain was keyed, and refuses an unkeyed link once the chain is keyed', async () => {
    const unkeyed = open(file, null);
    await unkeyed.append('batch-acme', [orgEvent('BatchStarted'), orgEvent('BatchFinished')], 'no_stream');
    await unkeyed.close();
    const keyed = open(file);
    await keyed.append('batch-acme', [orgEvent('BatchArchived')], 1);
    expect(await verify(keyed)).toEqual({ ok: true, checked: 3, unchained: 0, firstBreak: null });
    await keyed.close();
    // A process holding no key (an older release, a tool) appends after the keyed link: a downgrade.
    const downgraded = open(file, null);
    try {
      await downgraded.append('batch-acme', [orgEvent('BatchStarted')], 2);
      expect(await verify(downgraded)).toMatchObject({ ok: false, checked: 3, firstBreak: { revision: 3, reason: expect.stringContaining('carries no key') } });
    } finally {
      await downgraded.close();
    }
  });

  it('reports the newest rows deleted from the file, where the chain now stops', async () => {
    const store = open(file);
    try {
      await store.append('prompt-acme.p', [orgEvent('PromptVersionCreated'), orgEvent('PromptChannelPromoted')], 'no_stream');
      const kept = await store.append('batch-acme', [orgEvent('BatchStarted')], 'no_stream');
      await store.append('batch-acme', [orgEvent('BatchFinished'), orgEvent('BatchArchived')], 0);
      expect((await verify(store)).ok).toBe(true);
      withFile(file, (db) => db.prepare('DELETE FROM events WHERE position > ?').run(kept.position));
      const report = await verify(store);
      expect(report).toMatchObject({
        ok: false,
        checked: 3,
        firstBreak: { position: kept.position, stream: 'batch-acme', revision: 0, reason: expect.stringContaining('newest events are missing') },
      });
      expect(report.firstBreak?.reason).toContain('batch-acme at revision 2');
    } finally {
      await store.close();
    }
  });

  it('reports a deleted head record while chained events remain', async () => {
    const store = open(file);
    try {
      await store.append('batch-acme', [orgEvent('BatchStarted'), orgEvent('BatchFinished')], 'no_stream');
      withFile(file, (db) => db.prepare("DELETE FROM chain_heads WHERE organization = 'acme'").run());
      expect(await verify(store)).toMatchObject({
        ok: false,
        firstBreak: { revision: 1, reason: expect.stringContaining('record of where its chain ends is missing') },
      });
      // An organization with nothing chained has no head, and nothing to report.
      expect(await verify(store, 'globex')).toEqual({ ok: true, checked: 0, unchained: 0, firstBreak: null });
    } finally {
      await store.close();
    }
  });

  it('moves the head with the append that was stored, never with one refused in the same group', async () => {
    const store = open(file);
    try {
      await store.append('batch-acme', [orgEvent('BatchStarted')], 'no_stream');
      const [stored, refused] = await Promise.allSettled([
        store.append('batch-acme', [orgEvent('BatchFinished')], 0),
        store.append('batch-acme', [orgEvent('BatchArchived')], 0),
      ]);
      expect(refused).toMatchObject({ status: 'rejected', reason: expect.any(WrongExpectedVersion) });
      expect(stored.status).toBe('fulfilled');
      const [, last] = await store.readOrganization({ organization: 'acme', maxCount: 10 });
      expect(await store.chainEnd('acme')).toEqual({ hashes: [last.chain?.hash], at: { stream: 'batch-acme', revision: 1 } });
    } finally {
      await store.close();
    }
  });

  it('fills the head table of a log written before it existed, once, from the rows', async () => {
    const older = open(file, null);
    await older.append('batch-acme', [orgEvent('BatchStarted'), orgEvent('BatchFinished')], 'no_stream');
    await older.append('batch-globex', [orgEvent('BatchStarted', 'globex')], 'no_stream');
    await older.close();
    withFile(file, (db) => db.exec('DROP TABLE chain_heads'));
    const store = open(file);
    try {
      const [acme, globex] = [
        await store.readOrganization({ organization: 'acme', maxCount: 10 }),
        await store.readOrganization({ organization: 'globex', maxCount: 10 }),
      ];
      expect(await store.chainEnd('acme')).toEqual({ hashes: [acme[1].chain?.hash], at: { stream: 'batch-acme', revision: 1 } });
      expect(await store.chainEnd('globex')).toEqual({ hashes: [globex[0].chain?.hash], at: { stream: 'batch-globex', revision: 0 } });
      // Appending links to the migrated head; deleting the newest row then shows.
      await store.append('batch-acme', [orgEvent('BatchArchived')], 1);
      expect(await verify(store)).toEqual({ ok: true, checked: 3, unchained: 0, firstBreak: null });
      withFile(file, (db) => db.prepare("DELETE FROM events WHERE stream = 'batch-acme' AND revision = 2").run());
      expect(await verify(store)).toMatchObject({ ok: false, firstBreak: { revision: 1, reason: expect.stringContaining('newest events are missing') } });
    } finally {
      await store.close();
    }
  });
});
