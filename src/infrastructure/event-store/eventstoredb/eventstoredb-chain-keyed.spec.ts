/**
 * The keyed chain on EventStoreDB, over the gRPC test server: an event appended with the plain
 * client by someone without the chain key is reported however well its link is formed, the key
 * never reaches the server, and the newest append's events removed after its claim's lease show.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { EventStoreDBClient, jsonEvent, JSONType } from '@eventstore/db-client';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { deriveChainKey } from '#infrastructure/secrets/chain-key';
import { VerifyAuditChainHandler } from '#modules/audit/verify-chain/verify-chain.handler';
import { VerifyAuditChain } from '#modules/audit/verify-chain/verify-chain.query';
import { eventHash } from '#shared/event-chain';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import type { NewEvent } from '../event-store.port';
import { EventStoreDbTestServer } from '../../../../test/support/eventstoredb/server';

const masterKey = randomBytes(32);
const chainKey = deriveChainKey(masterKey);
const servers: EventStoreDbTestServer[] = [];
const opened: EventStoreDbEventStore[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function keyedInstance(chainLeaseMs = 30_000): Promise<{ server: EventStoreDbTestServer; store: EventStoreDbEventStore }> {
  const server = await EventStoreDbTestServer.start();
  servers.push(server);
  const store = await EventStoreDbEventStore.connect(server.url(), { chainKey, chainLeaseMs });
  opened.push(store);
  return { server, store };
}

function orgEvent(type: string): NewEvent {
  const correlationId = randomUUID();
  return {
    id: randomUUID(),
    type,
    data: { at: randomUUID() },
    metadata: { organization: 'acme', actor: 'key_audit', correlationId, causationId: correlationId },
  };
}

const verify = (store: EventStoreDbEventStore) => new VerifyAuditChainHandler(store, new KeyRing(store, masterKey)).execute(new VerifyAuditChain('acme'));

/** Everything the server holds, as the plain client reads it: every event's data and metadata. */
async function everythingStored(server: EventStoreDbTestServer): Promise<Buffer> {
  const client = EventStoreDBClient.connectionString(server.url());
  const parts: Buffer[] = [];
  try {
    for await (const resolved of client.readAll()) {
      const event = resolved.event;
      if (!event) continue;
      for (const body of [event.data, event.metadata]) parts.push(body instanceof Uint8Array ? Buffer.from(body) : Buffer.from(JSON.stringify(body ?? null)));
    }
  } finally {
    await client.dispose();
  }
  return Buffer.concat(parts);
}

describe('the keyed audit chain on EventStoreDB', () => {
  it('reports an event appended with the plain client, linked to the last one by a valid sha256 hash', async () => {
    const { server, store } = await keyedInstance();
    await store.append('apikey-acme', [orgEvent('ApiKeyIssued'), orgEvent('ApiKeyRevoked')], 'no_stream');
    const [, last] = await store.readOrganization({ organization: 'acme', maxCount: 10 });
    expect(last.chain?.hash).toMatch(new RegExp(`^${chainKey.id}\\.[0-9a-f]{64}$`));
    expect(await verify(store)).toEqual({ ok: true, checked: 2, unchained: 0, firstBreak: null });

    // Someone with write access to the server, and no key, computes the link as the chain's formula says.
    const recordedAt = new Date().toISOString();
    const forged = { id: randomUUID(), type: 'ApiKeyIssued', data: { name: 'forged', permissions: ['admin'] }, metadata: last.metadata };
    const prevHash = last.chain?.hash ?? null;
    const hash = eventHash({ ...forged, streamName: 'apikey-acme', revision: 2, createdAt: recordedAt }, prevHash);
    const client = EventStoreDBClient.connectionString(server.url());
    try {
      const metadata = { ...forged.metadata, assayChain: { prevHash, hash, recordedAt } } as JSONType;
      await client.appendToStream('apikey-acme', jsonEvent({ id: forged.id, type: forged.type, data: forged.data, metadata }), { expectedRevision: 1n });
    } finally {
      await client.dispose();
    }
    const [, , stored] = await store.readOrganization({ organization: 'acme', maxCount: 10 });
    expect(stored.chain).toEqual({ prevHash, hash });
    expect(await verify(store)).toEqual({
      ok: false,
      checked: 2,
      unchained: 0,
      firstBreak: { position: stored.position, stream: 'apikey-acme', revision: 2, reason: expect.stringContaining('carries no key') },
    });
  });

  it('never sends the chain key or the master key to the server, in any spelling', async () => {
    const { server, store } = await keyedInstance();
    await store.append('batch-acme', [orgEvent('BatchStarted'), orgEvent('BatchFinished')], 'no_stream');
    await new KeyRing(store, masterKey).seal({ kind: 'variable', organization: 'acme', name: 'TOKEN' }, 'value');
    expect((await verify(store)).ok).toBe(true);
    const stored = await everythingStored(server);
    expect(stored.includes(Buffer.from('"assayChain"'))).toBe(true);
    for (const key of [chainKey.key, masterKey]) {
      for (const spelling of [key, key.toString('hex'), key.toString('base64'), key.toString('base64url')]) expect(stored.includes(spelling)).toBe(false);
    }
  });

  it("reports the newest append's events removed once its claim is older than the lease, which a live writer would have settled", async () => {
    // Long enough that a loaded machine still sends the events within a third of it.
    const leaseMs = 1_500;
    const { server, store } = await keyedInstance(leaseMs);
    await store.append('prompt-acme.p', [orgEvent('PromptVersionCreated'), orgEvent('PromptChannelPromoted')], 'no_stream');
    await store.append('batch-acme', [orgEvent('BatchStarted')], 'no_stream');
    const remaining = (await store.readStream('prompt-acme.p'))[1];
    server.remove('batch-acme');
    // Past the lease: the writer has landed its events or voided its claim by then, or stopped.
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 200));
    const report = await verify(store);
    expect(report).toEqual({
      ok: false,
      checked: 2,
      unchained: 0,
      firstBreak: { position: remaining.position, stream: 'prompt-acme.p', revision: 1, reason: expect.stringContaining('newest events are missing') },
    });
    expect(report.firstBreak?.reason).toContain('batch-acme at revision 0');
    expect(report.firstBreak?.reason).toContain('stopped after claiming them');
  });
});
