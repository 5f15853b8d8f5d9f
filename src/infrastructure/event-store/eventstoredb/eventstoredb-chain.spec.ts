/**
 * The organization's hash chain on the EventStoreDB adapter, over the gRPC test server
 * (test/support/eventstoredb/server.ts: the real client, the real protocol, the server's rules).
 * Several adapters over one server are several instances of the service. What must hold:
 * the chain is one line in `$all` order however the writers of one organization race, crash or
 * lose their connection, and `audit.verify` and the export check it as they do on SQLite.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { NewEvent, WrongExpectedVersion } from '../event-store.port';
import { eventHash } from '#shared/event-chain';
import { ExportChainCheck } from '../../../cli/audit/export-chain-check';
import { exportLines } from '#modules/audit/export-events/ndjson-export';
import { VerifyAuditChainHandler } from '#modules/audit/verify-chain/verify-chain.handler';
import { VerifyAuditChain } from '#modules/audit/verify-chain/verify-chain.query';
import { EventStoreDbTestServer } from '../../../../test/support/eventstoredb/server';

const never = () => new Promise<void>(() => undefined);
const servers: EventStoreDbTestServer[] = [];
const opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function startServer(): Promise<EventStoreDbTestServer> {
  const server = await EventStoreDbTestServer.start();
  servers.push(server);
  return server;
}

/** Another tool writing to the server around the adapter, with the plain client. */
async function writeAround(server: EventStoreDbTestServer, stream: string, type: string, metadata: Record<string, unknown> = {}): Promise<void> {
  const client = EventStoreDBClient.connectionString(server.url());
  try {
    await client.appendToStream(stream, [jsonEvent({ id: randomUUID(), type, data: {}, metadata })]);
  } finally {
    await client.dispose();
  }
}

function orgEvent(organization: string, type: string, data: unknown = { at: randomUUID() }): NewEvent {
  const correlationId = randomUUID();
  return { id: randomUUID(), type, data, metadata: { organization, actor: 'key_audit', correlationId, causationId: correlationId } };
}

async function instance(server: EventStoreDbTestServer, chainLeaseMs = 30_000, options: Record<string, string> = {}): Promise<EventStoreDbEventStore> {
  const store = await EventStoreDbEventStore.connect(server.url(options), { chainLeaseMs });
  opened.push(store);
  return store;
}

function verify(store: EventStoreDbEventStore, organization: string) {
  return new VerifyAuditChainHandler(store, new KeyRing(store, randomBytes(32))).execute(new VerifyAuditChain(organization));
}

async function chainStreamTypes(store: EventStoreDbEventStore, organization: string): Promise<string[]> {
  return (await store.readStream(`auditchain-${organization}`)).map((event) => event.type);
}

describe('the audit chain on EventStoreDB', () => {
  it('links each event of the organization to the one before it, in metadata the reads take back out', async () => {
    const server = await startServer();
    const store = await instance(server);
    const created = orgEvent('acme', 'PromptVersionCreated', { id: 'support/triage', version: 1 });
    await store.append('prompt-acme.support', [created, orgEvent('acme', 'PromptChannelPromoted')], 'no_stream');
    await store.append('batch-1', [orgEvent('globex', 'BatchStarted')], 'no_stream');
    await store.append('prompt-acme.support', [orgEvent('acme', 'PromptChannelPromoted')], 'any');
    await store.append('connector-1', [orgEvent('acme', 'ConnectorAdded')], 'any');

    const audited = await store.readOrganization({ organization: 'acme', maxCount: 100 });
    expect(audited.map((event) => event.type)).toEqual(['PromptVersionCreated', 'PromptChannelPromoted', 'PromptChannelPromoted', 'ConnectorAdded']);
    expect(audited[0].chain?.prevHash).toBeNull();
    audited.forEach((event, index) => {
      expect(event.chain?.hash).toBe(eventHash(event, event.chain?.prevHash ?? null));
      if (index > 0) expect(event.chain?.prevHash).toBe(audited[index - 1].chain?.hash);
    });
    // Stored with the link and the adapter's time; read back as appended, at that time.
    const [stored] = await store.readStream('prompt-acme.support');
    expect(stored.metadata).toEqual(created.metadata);
    const raw = JSON.parse(server.streams.get('prompt-acme.support')?.[0].metadata.toString() ?? '{}') as Record<string, { recordedAt: string; hash: string }>;
    expect(raw.assayChain.hash).toBe(audited[0].chain?.hash);
    expect(stored.createdAt).toBe(raw.assayChain.recordedAt);
    // The chain streams are the store's bookkeeping: not in `$all` as the port reads it.
    expect((await store.readAll()).some((event) => event.streamName.startsWith('auditchain-'))).toBe(false);
    expect(await chainStreamTypes(store, 'acme')).toEqual(['AuditChainClaimed', 'AuditChainClaimed', 'AuditChainClaimed']);

    expect(await verify(store, 'acme')).toEqual({ ok: true, checked: 4, unchained: 0, firstBreak: null });
    expect(await verify(store, 'globex')).toEqual({ ok: true, checked: 1, unchained: 0, firstBreak: null });
    const lines: string[] = [];
    for await (const line of exportLines(store, { organization: 'acme', maxCount: 500 })) lines.push(line);
    expect(lines).toHaveLength(5);
    expect(lines.slice(0, 4).every((line) => (JSON.parse(line) as { chain: unknown }).chain !== null)).toBe(true);
    const check = new ExportChainCheck();
    for (const line of lines) expect(check.add(line.trimEnd())).toBeNull();
    expect(check.finish()).toEqual({ break: null, events: 4 });
  });

  it('serializes two instances appending for one organization: a claim conflicts, its writer re-reads and retries', async () => {
    const server = await startServer();
    const [first, second] = [await instance(server), await instance(server)];
    const appendMany = async (store: EventStoreDbEventStore, name: string) => {
      for (let index = 0; index < 15; index++)
        await store.append(`trial-${name}${index}`, [orgEvent('acme', 'TrialQueued'), orgEvent('acme', 'TrialStarted')], 'no_stream');
    };
    await Promise.all([appendMany(first, 'a'), appendMany(second, 'b'), appendMany(first, 'c')]);

    expect(server.refused.filter((stream) => stream === 'auditchain-acme').length).toBeGreaterThan(0);
    const audited = await second.readOrganization({ organization: 'acme', maxCount: 1000 });
    expect(audited).toHaveLength(90);
    expect(await verify(first, 'acme')).toEqual({ ok: true, checked: 90, unchained: 0, firstBreak: null });
    // A lost claim was lost before its events were sent: nothing needed voiding.
    expect(await chainStreamTypes(first, 'acme')).not.toContain('AuditChainClaimVoided');
    // Each append is sent within a third of the lease from its claim.
    const domainDeadlines = server.deadlines.filter(({ stream }) => stream.startsWith('trial-'));
    expect(domainDeadlines).toHaveLength(45);
    expect(domainDeadlines.every(({ deadlineMs }) => deadlineMs > 0 && deadlineMs <= 10_000)).toBe(true);
  });

  it('lets one of two instances appending at the same stream revision win; the loser voids its claim and the chain holds', async () => {
    const server = await startServer();
    const [first, second] = [await instance(server), await instance(server)];
    await first.append('prompt-acme.p', [orgEvent('acme', 'PromptVersionCreated')], 'no_stream');
    const outcomes = await Promise.allSettled([
      first.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted')], 0),
      second.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted')], 0),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refusal = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(refusal?.reason).toBeInstanceOf(WrongExpectedVersion);
    expect((refusal?.reason as WrongExpectedVersion).actual).toBe(1);
    expect(await chainStreamTypes(first, 'acme')).toContain('AuditChainClaimVoided');
    await second.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted')], 1);
    expect(await verify(second, 'acme')).toEqual({ ok: true, checked: 3, unchained: 0, firstBreak: null });
  });

  it('takes a refusal the client answers instead of raising (throwOnAppendFailure=false) as a refusal, for claims and appends', async () => {
    const server = await startServer();
    const [first, second] = [
      await instance(server, 30_000, { throwOnAppendFailure: 'false' }),
      await instance(server, 30_000, { throwOnAppendFailure: 'false' }),
    ];
    await first.append('prompt-acme.p', [orgEvent('acme', 'PromptVersionCreated')], 'no_stream');
    const appendMany = async (store: EventStoreDbEventStore, name: string) => {
      for (let index = 0; index < 8; index++) await store.append(`batch-${name}${index}`, [orgEvent('acme', 'BatchStarted')], 'no_stream');
    };
    await Promise.all([appendMany(first, 'a'), appendMany(second, 'b')]);
    expect(server.refused).toContain('auditchain-acme');
    const refusal = await second.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted')], 'no_stream').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(WrongExpectedVersion);
    // The client reports the revision of such a refusal wrongly (true as 1): the adapter reads the stream's own.
    expect((refusal as WrongExpectedVersion).actual).toBe(0);
    expect(await verify(first, 'acme')).toEqual({ ok: true, checked: 17, unchained: 0, firstBreak: null });
  });

  it('after a writer died once its events landed, the next writer of another instance links after them', async () => {
    const server = await startServer();
    const [dying, next] = [await instance(server), await instance(server)];
    await next.append('prompt-acme.p', [orgEvent('acme', 'PromptVersionCreated')], 'no_stream');
    // The events are stored; the writer never hears back (its process ended).
    server.after = (stream) => (stream === 'batch-died' ? never() : Promise.resolve());
    void dying.append('batch-died', [orgEvent('acme', 'BatchStarted'), orgEvent('acme', 'BatchFinished')], 'no_stream').catch(() => undefined);
    while (!server.streams.has('batch-died')) await new Promise((resolve) => setImmediate(resolve));

    await next.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted')], 0);
    const audited = await next.readOrganization({ organization: 'acme', maxCount: 100 });
    expect(audited.map((event) => event.type)).toEqual(['PromptVersionCreated', 'BatchStarted', 'BatchFinished', 'PromptChannelPromoted']);
    expect(audited[3].chain?.prevHash).toBe(audited[2].chain?.hash);
    expect(await chainStreamTypes(next, 'acme')).toEqual(['AuditChainClaimed', 'AuditChainClaimed', 'AuditChainClaimed']);
    expect(await verify(next, 'acme')).toEqual({ ok: true, checked: 4, unchained: 0, firstBreak: null });
  });

  it('after a writer died between its claim and its events, the next writer voids the claim once its lease passed', async () => {
    const server = await startServer();
    const dying = await instance(server);
    const next = await instance(server, 300);
    await next.append('prompt-acme.p', [orgEvent('acme', 'PromptVersionCreated')], 'no_stream');
    server.before = (stream) => (stream === 'batch-died' ? never() : Promise.resolve());
    void dying.append('batch-died', [orgEvent('acme', 'BatchStarted')], 'no_stream').catch(() => undefined);
    while ((await chainStreamTypes(next, 'acme')).length < 2) await new Promise((resolve) => setImmediate(resolve));
    // A claim whose events have not landed, within its lease (30 s for this reader): the chain may end before it, and verify says so.
    expect(await verify(dying, 'acme')).toEqual({ ok: true, checked: 1, unchained: 0, firstBreak: null });

    await next.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted')], 0);
    expect(await chainStreamTypes(next, 'acme')).toEqual(['AuditChainClaimed', 'AuditChainClaimed', 'AuditChainClaimVoided', 'AuditChainClaimed']);
    const [voided] = (await next.readStream('auditchain-acme', { fromRevision: 2 })) as Array<{ data: { reason: string } }>;
    expect(voided.data.reason).toContain('had not landed after 300 ms');
    const audited = await next.readOrganization({ organization: 'acme', maxCount: 100 });
    expect(audited.map((event) => event.type)).toEqual(['PromptVersionCreated', 'PromptChannelPromoted']);
    expect(audited[1].chain?.prevHash).toBe(audited[0].chain?.hash);
    expect(await verify(next, 'acme')).toEqual({ ok: true, checked: 2, unchained: 0, firstBreak: null });
  });

  it('voids at once, without waiting for the lease, a claim whose stream revision another event took', async () => {
    const server = await startServer();
    const dying = await instance(server);
    const next = await instance(server, 60_000);
    await next.append('prompt-acme.p', [orgEvent('acme', 'PromptVersionCreated')], 'no_stream');
    let held = false;
    server.before = (stream) => {
      if (stream !== 'batch-taken' || held) return Promise.resolve();
      held = true;
      return never();
    };
    void dying.append('batch-taken', [orgEvent('acme', 'BatchStarted')], 'no_stream').catch(() => undefined);
    while ((await chainStreamTypes(next, 'acme')).length < 2) await new Promise((resolve) => setImmediate(resolve));
    // Another tool writes revision 0 of that stream: the claimed append, which expects no stream, can never land.
    await writeAround(server, 'batch-taken', 'Imported');

    await next.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted')], 0);
    const [voided] = (await next.readStream('auditchain-acme', { fromRevision: 2, maxCount: 1 })) as Array<{ type: string; data: { reason: string } }>;
    expect(voided.type).toBe('AuditChainClaimVoided');
    expect(voided.data.reason).toContain('can never land');
    expect(await verify(next, 'acme')).toEqual({ ok: true, checked: 2, unchained: 0, firstBreak: null });
  });

  it('answers an append whose reply the connection lost from what the server stored, and keeps chaining', async () => {
    const server = await startServer();
    const store = await instance(server);
    let failed = false;
    server.after = async (stream) => {
      if (stream !== 'batch-1' || failed) return;
      failed = true;
      throw new Error('14 UNAVAILABLE: Connection dropped');
    };
    const result = await store.append('batch-1', [orgEvent('acme', 'BatchStarted'), orgEvent('acme', 'TrialQueued')], 'no_stream');
    const stored = await store.readStream('batch-1');
    expect(result).toEqual({ nextExpectedRevision: 1, position: stored[1].position });
    await store.append('batch-1', [orgEvent('acme', 'BatchFinished')], 1);
    expect(await verify(store, 'acme')).toEqual({ ok: true, checked: 3, unchained: 0, firstBreak: null });
  });

  it('reports an event changed in the store, and one written around the adapter, at that event', async () => {
    const server = await startServer();
    const store = await instance(server);
    // Written before the chain existed (an older version of the service): counted, not checked.
    await writeAround(server, 'prompt-acme.p', 'PromptVersionCreated', orgEvent('acme', 'x').metadata);
    await store.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted', { channel: 'production', toVersion: 1 })], 0);
    await store.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted', { channel: 'production', toVersion: 2 })], 1);
    await store.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted', { channel: 'production', toVersion: 3 })], 2);
    expect(await verify(store, 'acme')).toEqual({ ok: true, checked: 3, unchained: 1, firstBreak: null });

    server.tamper('prompt-acme.p', 2, (record) => {
      record.data = Buffer.from(JSON.stringify({ channel: 'production', toVersion: 7 }));
    });
    const tampered = (await store.readStream('prompt-acme.p', { fromRevision: 2, maxCount: 1 }))[0];
    expect(await verify(store, 'acme')).toEqual({
      ok: false,
      checked: 1,
      unchained: 1,
      firstBreak: { position: tampered.position, stream: 'prompt-acme.p', revision: 2, reason: expect.stringContaining('does not match its hash') },
    });

    await store.append('prompt-globex.p', [orgEvent('globex', 'PromptVersionCreated')], 'no_stream');
    await writeAround(server, 'prompt-globex.p', 'PromptChannelPromoted', orgEvent('globex', 'x').metadata);
    const forged = (await store.readStream('prompt-globex.p', { fromRevision: 1 }))[0];
    expect((await verify(store, 'globex')).firstBreak).toEqual({
      position: forged.position,
      stream: 'prompt-globex.p',
      revision: 1,
      reason: expect.stringContaining('has no hash'),
    });
  });

  it("reports the removal of the organization's newest events, which nothing after them names", async () => {
    const server = await startServer();
    const store = await instance(server);
    await store.append('prompt-acme.p', [orgEvent('acme', 'PromptVersionCreated'), orgEvent('acme', 'PromptChannelPromoted')], 'no_stream');
    await store.append('connector-acme', [orgEvent('acme', 'ConnectorAdded')], 'no_stream');
    await store.append('batch-acme', [orgEvent('acme', 'BatchStarted'), orgEvent('acme', 'BatchFinished')], 'no_stream');
    await store.append('batch-globex', [orgEvent('globex', 'BatchStarted')], 'no_stream');
    expect(await verify(store, 'acme')).toEqual({ ok: true, checked: 5, unchained: 0, firstBreak: null });
    const remaining = (await store.readStream('prompt-acme.p'))[1];

    // The newest append's events alone, within the lease: its claim then reads as one whose
    // writer is still sending them (decision records 0012, 0107; after the lease, see eventstoredb-chain-keyed.spec.ts).
    server.remove('batch-acme');
    expect(await verify(store, 'acme')).toEqual({ ok: true, checked: 3, unchained: 0, firstBreak: null });

    server.remove('connector-acme');
    expect(await verify(store, 'acme')).toEqual({
      ok: false,
      checked: 2,
      unchained: 0,
      firstBreak: { position: remaining.position, stream: 'prompt-acme.p', revision: 1, reason: expect.stringContaining('newest events are missing') },
    });
    // Another organization's chain is its own.
    expect(await verify(store, 'globex')).toEqual({ ok: true, checked: 1, unchained: 0, firstBreak: null });

    // Every event of the organization removed: the break is before the first.
    server.remove('prompt-acme.p');
    expect((await verify(store, 'acme')).firstBreak).toEqual({
      position: -1,
      stream: '',
      revision: -1,
      reason: expect.stringContaining('before its first event'),
    });
  });

  it('chains each organization of an append of several, and serializes one instance own appends without conflicts', async () => {
    const server = await startServer();
    const store = await instance(server);
    await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        store.append(`mixed-${index}`, [orgEvent('acme', 'A'), orgEvent('globex', 'G'), orgEvent('acme', 'A2')], 'no_stream'),
      ),
    );
    expect(server.refused).toEqual([]);
    expect(await verify(store, 'acme')).toEqual({ ok: true, checked: 24, unchained: 0, firstBreak: null });
    expect(await verify(store, 'globex')).toEqual({ ok: true, checked: 12, unchained: 0, firstBreak: null });
  });
});
