/**
 * What the EventStoreDB adapter costs the server, counted where the calls arrive (the gRPC test
 * server, test/support/eventstoredb/server.ts): round trips per append of an organization, what
 * `$all` reads and subscriptions carry over the wire, and what a read of one organization reads.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { ResumingAllSubscription } from './resuming-subscription';
import { AppendResult, LIVENESS_METADATA_KEY, NewEvent, RecordedEvent, WrongExpectedVersion } from '../event-store.port';
import { VerifyAuditChainHandler } from '#modules/audit/verify-chain/verify-chain.handler';
import { VerifyAuditChain } from '#modules/audit/verify-chain/verify-chain.query';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { EventStoreDbTestServer } from '../../../../test/support/eventstoredb/server';

const servers: EventStoreDbTestServer[] = [];
const opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function serverAndStore(): Promise<{ server: EventStoreDbTestServer; store: EventStoreDbEventStore }> {
  const server = await EventStoreDbTestServer.start();
  servers.push(server);
  const store = await EventStoreDbEventStore.connect(server.url(), { chainLeaseMs: 30_000 });
  opened.push(store);
  return { server, store };
}

function orgEvent(organization: string, type = 'BatchStarted'): NewEvent {
  const correlationId = randomUUID();
  return { id: randomUUID(), type, data: {}, metadata: { organization, actor: 'key_costs', correlationId, causationId: correlationId } };
}

/** The calls the server answers while `work` runs. */
async function callsDuring(server: EventStoreDbTestServer, work: () => Promise<unknown>): Promise<typeof server.calls> {
  const before = { ...server.calls };
  await work();
  return {
    streamReads: server.calls.streamReads - before.streamReads,
    allReads: server.calls.allReads - before.allReads,
    subscriptions: server.calls.subscriptions - before.subscriptions,
    appends: server.calls.appends - before.appends,
  };
}

describe('the cost of the EventStoreDB adapter', () => {
  it("appends an organization's events in two round trips (claim, events) when it holds the head and knows the stream, three with `any`", async () => {
    const { server, store } = await serverAndStore();
    // The first append settles the chain's head (reads of the chain stream); this instance holds it after.
    await store.append('batch-0', [orgEvent('acme')], 'no_stream');

    expect(await callsDuring(server, () => store.append('batch-1', [orgEvent('acme')], 'no_stream'))).toEqual({
      streamReads: 0,
      allReads: 0,
      subscriptions: 0,
      appends: 2,
    });
    expect(await callsDuring(server, () => store.append('batch-1', [orgEvent('acme', 'BatchFinished')], 0))).toEqual({
      streamReads: 0,
      allReads: 0,
      subscriptions: 0,
      appends: 2,
    });
    // `any` must read the stream: its revision, and the ids it holds (which the server does not check at the revision sent).
    expect(await callsDuring(server, () => store.append('batch-1', [orgEvent('acme', 'BatchArchived')], 'any'))).toEqual({
      streamReads: 1,
      allReads: 0,
      subscriptions: 0,
      appends: 2,
    });
    expect(server.refused).toEqual([]);

    // Another instance, which holds no head: the chain stream's last claim and the event it names, then the claim and the events.
    const other = await EventStoreDbEventStore.connect(server.url(), { chainLeaseMs: 30_000 });
    opened.push(other);
    expect(await callsDuring(server, () => other.append('batch-2', [orgEvent('acme')], 'no_stream'))).toEqual({
      streamReads: 2,
      allReads: 0,
      subscriptions: 0,
      appends: 2,
    });
    // The first instance's head is stale now: its claim is refused, then it settles the other's and claims again.
    expect(await callsDuring(server, () => store.append('batch-3', [orgEvent('acme')], 'no_stream'))).toEqual({
      streamReads: 2,
      allReads: 0,
      subscriptions: 0,
      appends: 3,
    });
    expect(await new VerifyAuditChainHandler(store, new KeyRing(store, randomBytes(32))).execute(new VerifyAuditChain('acme'))).toEqual({
      ok: true,
      checked: 6,
      unchained: 0,
      firstBreak: null,
    });
  });

  it('still answers a retry with the original, whatever revision it expects, reading the stream only to tell', async () => {
    const { server, store } = await serverAndStore();
    const started = [orgEvent('acme'), orgEvent('acme', 'TrialQueued')];
    const original = await store.append('batch-1', started, 'no_stream');
    await store.append('batch-1', [orgEvent('acme', 'BatchFinished')], 1);
    // Held ids answer the retry at a revision this instance knows; the server answers one sent as new.
    expect(await store.append('batch-1', started, 'no_stream')).toEqual(original);
    expect(await store.append('batch-1', started, 2)).toEqual(original);
    expect(await store.append('batch-1', started, 'any')).toEqual(original);
    // Another instance, which holds nothing of the stream.
    const other = await EventStoreDbEventStore.connect(server.url(), { chainLeaseMs: 30_000 });
    opened.push(other);
    expect(await other.append('batch-1', started, 'no_stream')).toEqual(original);
    expect(await other.append('batch-1', started, 2)).toEqual(original);
    expect((await store.readStream('batch-1')).map((event) => event.type)).toEqual(['BatchStarted', 'TrialQueued', 'BatchFinished']);
    expect(await new VerifyAuditChainHandler(other, new KeyRing(other, randomBytes(32))).execute(new VerifyAuditChain('acme'))).toEqual({
      ok: true,
      checked: 3,
      unchained: 0,
      firstBreak: null,
    });
  });

  it('appends an unchained event (a lease renewal) in one round trip at a known revision, and still answers its retry with the original', async () => {
    const { server, store } = await serverAndStore();
    const renewal = (): NewEvent => ({ ...orgEvent('acme', 'TrialLeaseRenewed'), metadata: { ...orgEvent('acme').metadata, [LIVENESS_METADATA_KEY]: true } });
    const first = [renewal()];
    const second = [renewal()];
    let created: AppendResult | undefined;
    expect(await callsDuring(server, async () => (created = await store.append('trial-1', first, 'no_stream')))).toEqual({
      streamReads: 0,
      allReads: 0,
      subscriptions: 0,
      appends: 1,
    });
    const original = await store.append('trial-1', second, 0);
    // A retry, at the revision it was sent at or as new: answered with the original, reading only after the server refused.
    expect(await store.append('trial-1', second, 0)).toEqual(original);
    expect(await store.append('trial-1', first, 'no_stream')).toEqual(created);
    await expect(store.append('trial-1', [renewal()], 0)).rejects.toBeInstanceOf(WrongExpectedVersion);
    expect((await store.readStream('trial-1')).map((event) => event.id)).toEqual([first[0].id, second[0].id]);
  });

  it('leaves the chain streams on the server: none of their events crosses the wire to $all reads and subscriptions, which go on past them', async () => {
    const { server, store } = await serverAndStore();
    for (let index = 0; index < 40; index++) await store.append(`batch-${index}`, [orgEvent('acme')], 'no_stream');
    const renewal = orgEvent('acme', 'TrialLeaseRenewed');
    await store.append('lease-1', [{ ...renewal, metadata: { ...renewal.metadata, liveness: true } }], 'no_stream');

    const read = await store.readAll();
    expect(read.map((event) => event.streamName)).toEqual([...Array.from({ length: 40 }, (_, index) => `batch-${index}`), 'lease-1']);
    expect((await store.readAll({ maxCount: 3 })).map((event) => event.streamName)).toEqual(['batch-0', 'batch-1', 'batch-2']);
    expect(await store.headPosition()).toBe(read[read.length - 1].position);

    const subscription = store.subscribeToAll({ after: read[0].position });
    const received: RecordedEvent[] = [];
    for await (const event of subscription) {
      received.push(event);
      if (received.length === read.length - 1) break;
    }
    expect(received).toEqual(read.slice(1));
    expect(server.sentFromAll.get('auditchain')).toBeUndefined();
    expect(server.sentFromAll.get('batch')).toBeGreaterThan(0);
  });

  it("moves a subscription's resume point past what the server's filter searched, so a resubscription does not search it again", async () => {
    const server = await EventStoreDbTestServer.start();
    servers.push(server);
    const client = EventStoreDBClient.connectionString(server.url());
    const { position } = await client.appendToStream('batch-1', [jsonEvent({ id: randomUUID(), type: 'BatchStarted', data: {} })]);
    for (let index = 0; index < 10; index++) {
      await client.appendToStream(
        'auditchain-acme',
        Array.from({ length: 10 }, () => jsonEvent({ id: randomUUID(), type: 'AuditChainClaimed', data: {} })),
      );
    }
    await client.dispose();
    const store = await EventStoreDbEventStore.connect(server.url());
    opened.push(store);
    const start = Number(position?.commit);
    const subscription = store.subscribeToAll({ after: start });
    if (!(subscription instanceof ResumingAllSubscription)) throw new Error('the adapter subscribes through ResumingAllSubscription');
    const pending = subscription[Symbol.asyncIterator]().next();
    // Nothing matches: the server sends a checkpoint per window of 32 events searched (its ReadBatchSize, multiplier 1).
    const chain = server.streams.get('auditchain-acme') ?? [];
    const lastCheckpoint = Number(chain[95].position);
    for (let turn = 0; turn < 10_000 && subscription.resumesAfter !== lastCheckpoint; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(subscription.resumesAfter).toBe(lastCheckpoint);
    expect(server.sentFromAll.size).toBe(0);
    await subscription.close();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it("reads an organization's events through its chain stream: never the other organizations' events, yet every event of its own, in position order", async () => {
    const { server, store } = await serverAndStore();
    const raw = EventStoreDBClient.connectionString(server.url());
    const around = (stream: string, event: NewEvent) =>
      raw.appendToStream(stream, [jsonEvent({ id: event.id, type: event.type, data: {}, metadata: event.metadata })]);
    const others = (count: number) =>
      server.log.commit(
        `others-${randomUUID()}`,
        { kind: 'no_stream' },
        Array.from({ length: count }, () => {
          const event = orgEvent('globex');
          return {
            id: event.id,
            type: event.type,
            contentType: 'application/json',
            data: Buffer.from('{}'),
            metadata: Buffer.from(JSON.stringify(event.metadata)),
          };
        }),
      );
    // Stored before the chain began (an older version of the service), in a stream never appended to again.
    await around('legacy-1', orgEvent('acme', 'ConnectorAdded'));
    await store.append('prompt-acme.p', [orgEvent('acme', 'PromptVersionCreated'), orgEvent('acme', 'PromptChannelPromoted')], 'no_stream');
    others(600);
    await store.append('batch-a', [orgEvent('acme'), orgEvent('globex')], 'no_stream');
    others(300);
    await store.append('prompt-acme.p', [orgEvent('acme', 'PromptChannelPromoted')], 1);
    // Written around the adapter into one of its streams: read, so that audit.verify reports it.
    await around('batch-a', orgEvent('acme', 'BatchFinished'));
    others(300);
    await raw.dispose();
    const expected = (await store.readAll()).filter((event) => event.metadata.organization === 'acme').map((event) => event.position);
    expect(expected).toHaveLength(6);

    server.sentFromAll.clear();
    expect((await store.readOrganization({ organization: 'acme', maxCount: 100 })).map((event) => event.position)).toEqual(expected);
    const paged: number[] = [];
    for (let after: number | undefined; ;) {
      const page = await store.readOrganization({ organization: 'acme', after, maxCount: 2 });
      paged.push(...page.map((event) => event.position));
      if (page.length < 2) break;
      after = page[page.length - 1].position;
    }
    expect(paged).toEqual(expected);
    expect((await store.readOrganization({ organization: 'acme', maxCount: 100, categories: ['batch'] })).map((event) => event.type)).toEqual([
      'BatchStarted',
      'BatchFinished',
    ]);
    expect((await store.readOrganization({ organization: 'acme', maxCount: 100, type: 'PromptChannelPromoted' })).map((event) => event.streamName)).toEqual([
      'prompt-acme.p',
      'prompt-acme.p',
    ]);
    // Of $all, only the start is read for events stored before the first chain claim: one page of 33 events (32 and
    // the one at the read's start) per read from the start (four here), and the first chain event, found once.
    expect([...server.sentFromAll.values()].reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(4 * 33 + 1);
    expect(server.sentFromAll.get('legacy')).toBe(4);
    expect(server.sentFromAll.get('auditchain')).toBe(1);
    expect((await new VerifyAuditChainHandler(store, new KeyRing(store, randomBytes(32))).execute(new VerifyAuditChain('acme'))).firstBreak?.reason).toContain(
      'has no hash',
    );
  });
});
