/**
 * The audit's hash chain with the service on EventStoreDB: the real server EVENTSTORE_URL names,
 * and the gRPC test server (test/support/eventstoredb/server.ts). A real history is checked event
 * by event by `audit.verify` and the export, and an event written to the server around the
 * service is reported at that event. The organization and its key are new for each run, so the
 * suite runs against a server that holds earlier runs' events.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { ExportChainCheck } from '../../src/cli/audit/export-chain-check';
import type { Answer, ApiClient } from '../support/http-client';
import { EventStoreDbTestServer } from '../support/eventstoredb/server';
import { InProcessServer, keyFor, startInProcess } from '../support/servers';
import { deriveChainKey } from '#infrastructure/secrets/chain-key';
import { eventHash } from '#shared/event-chain';

const servers: Array<[string, () => Promise<{ url: string; stop(): Promise<void> }>]> = [
  [
    'the gRPC test server',
    async () => {
      const server = await EventStoreDbTestServer.start();
      return { url: server.url(), stop: () => server.stop() };
    },
  ],
];
const realUrl = process.env.EVENTSTORE_URL;
if (realUrl) servers.push(['EVENTSTORE_URL', async () => ({ url: realUrl, stop: async () => undefined })]);
else
  process.stderr.write('EventStoreDB audit tests on a real server skipped: EVENTSTORE_URL is not set (see test/contract/event-store.eventstoredb.spec.ts).\n');
const SECRET = `sk-esdb-audit-${randomBytes(8).toString('hex')}`;
const MASTER_KEY = Buffer.alloc(32, 7);

async function listAll(api: ApiClient): Promise<any[]> {
  const events: any[] = [];
  let cursor: string | null = null;
  do {
    const answer: Answer = await api.call('audit.events.list', { limit: 1000, ...(cursor ? { cursor } : {}) });
    expect(answer.status).toBe(200);
    events.push(...answer.body.events);
    cursor = answer.body.next;
  } while (cursor);
  return events;
}

describe.each(servers)('the audit chain on EventStoreDB: %s', (_name, start) => {
  const organization = `audit_${randomBytes(6).toString('hex')}`;
  let eventStore: { url: string; stop(): Promise<void> };
  let url: string;
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    eventStore = await start();
    url = eventStore.url;
    server = await startInProcess({
      EVENTSTORE_URL: url,
      ASSAY_INIT_ORG: organization,
      ASSAY_INIT_API_KEY: `assay_esdb_audit_${randomBytes(16).toString('hex')}`,
      ASSAY_MASTER_KEY: MASTER_KEY.toString('base64'),
    });
    api = server.client;
    expect((await api.call('prompts.versions.create', { id: 'support/triage', content: 'Triage {{word}}' })).status).toBe(200);
    expect((await api.call('prompts.promote', { id: 'support/triage', channel: 'production', version: 1 })).status).toBe(200);
    expect((await api.call('prompts.versions.create', { id: 'support/triage', content: 'Triage {{word}} again' })).status).toBe(200);
    const connector = await api.call('connectors.add', {
      integrationId: 'openai-compatible',
      authMethodId: 'api-key',
      name: 'gateway',
      values: { apiKey: SECRET, baseUrl: 'https://llm.example/v1' },
    });
    expect(connector.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server.close();
    await eventStore.stop();
  });

  it('checks every event of a real history, in audit.verify and in the export', async () => {
    const events = await listAll(api);
    expect(events.length).toBeGreaterThanOrEqual(4);
    const chainKey = deriveChainKey(MASTER_KEY);
    expect(events.every((event) => event.chain?.hash.startsWith(`${chainKey.id}.`))).toBe(true);
    expect(events[0].chain.prevHash).toBeNull();
    expect((await api.call('audit.verify', {})).body).toEqual({ ok: true, checked: events.length, unchained: 0, firstBreak: null });

    const exported = await api.call('audit.events.export', {});
    expect(exported.status).toBe(200);
    const lines = exported.text.trimEnd().split('\n');
    expect(lines).toHaveLength(events.length + 1);
    const check = new ExportChainCheck();
    for (const line of lines) expect(check.add(line)).toBeNull();
    expect(check.finish()).toEqual({ break: null, events: events.length });
    expect(exported.text).not.toContain(SECRET);
    // The chain key is in no answer, in any spelling.
    const answers = [JSON.stringify(events), exported.text, JSON.stringify((await api.call('audit.verify', {})).body)].join('\n');
    for (const spelling of [chainKey.key.toString('hex'), chainKey.key.toString('base64'), chainKey.key.toString('base64url')])
      expect(answers).not.toContain(spelling);
  });

  it("reports an event written to the server around the service with a valid-looking sha256 link, which only the chain key tells from the service's", async () => {
    const globex = `globex_${randomBytes(6).toString('hex')}`;
    const other = await keyFor(server, globex, ['prompts:write', 'audit:read']);
    expect((await other.call('prompts.versions.create', { id: 'globex/p', content: 'text' })).status).toBe(200);
    const before = await listAll(other);
    const last = before[before.length - 1];
    const recordedAt = new Date().toISOString();
    const forged = { id: randomUUID(), type: 'PromptChannelPromoted', data: { channel: 'production', toVersion: 1 }, metadata: last.metadata };
    const prevHash: string = last.chain.hash;
    const revision = (last.revision as number) + 1;
    const hash = eventHash({ ...forged, streamName: last.stream, revision, createdAt: recordedAt }, prevHash);
    const client = EventStoreDBClient.connectionString(url);
    try {
      const metadata = { ...forged.metadata, assayChain: { prevHash, hash, recordedAt } };
      await client.appendToStream(last.stream, jsonEvent({ id: forged.id, type: forged.type, data: forged.data, metadata }));
    } finally {
      await client.dispose();
    }
    const stored = (await listAll(other)).at(-1);
    expect(stored).toMatchObject({ id: forged.id, chain: { prevHash, hash } });
    expect((await other.call('audit.verify', {})).body).toEqual({
      ok: false,
      checked: before.length,
      unchained: 0,
      firstBreak: { position: stored.position, stream: last.stream, revision, reason: expect.stringContaining('carries no key') },
    });
  });

  it('reports an event written to the server around the service, at that event', async () => {
    const [first] = await listAll(api);
    const client = EventStoreDBClient.connectionString(url);
    try {
      const forged = jsonEvent({ type: 'PromptChannelPromoted', data: { channel: 'production', toVersion: 2 }, metadata: first.metadata });
      await client.appendToStream(first.stream, forged);
    } finally {
      await client.dispose();
    }
    const events = await listAll(api);
    const forged = events[events.length - 1];
    expect(forged).toMatchObject({ stream: first.stream, type: 'PromptChannelPromoted', chain: null });
    const answer = await api.call('audit.verify', {});
    expect(answer.body).toEqual({
      ok: false,
      checked: events.length - 1,
      unchained: 0,
      firstBreak: { position: forged.position, stream: first.stream, revision: forged.revision, reason: expect.stringContaining('has no hash') },
    });
  });
});
