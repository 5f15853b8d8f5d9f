/**
 * The EventStoreDB test server follows the server's rules, as the real client sees them over the
 * wire: each test is one rule the adapters depend on.
 */
import { randomUUID } from 'node:crypto';
import {
  DeadlineExceededError,
  EventStoreDBClient,
  eventTypeFilter,
  jsonEvent,
  MaxAppendSizeExceededError,
  NotLeaderError,
  START,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import type { AllStreamResolvedEvent, AppendExpectedRevision, Position } from '@eventstore/db-client';
import { EventStoreDbTestServer } from './server';

const servers: EventStoreDbTestServer[] = [];
const clients: EventStoreDBClient[] = [];

async function node(options: Parameters<typeof EventStoreDbTestServer.start>[0] = {}): Promise<EventStoreDbTestServer> {
  const server = await EventStoreDbTestServer.start(options);
  servers.push(server);
  return server;
}

function clientOf(server: EventStoreDbTestServer, options: Record<string, string> = {}): EventStoreDBClient {
  const client = EventStoreDBClient.connectionString(server.url(options));
  clients.push(client);
  return client;
}

const event = (id = randomUUID(), data: Record<string, unknown> = {}) => jsonEvent({ id, type: 'Sampled', data });

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.dispose()));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

describe('the EventStoreDB test server', () => {
  it('answers a retried append with the ORIGINAL revision and position, even at a stale expected revision', async () => {
    const client = clientOf(await node());
    const batch = [event(), event()];
    const original = await client.appendToStream('s-1', batch, { expectedRevision: 'no_stream' });
    await client.appendToStream('s-1', [event()], { expectedRevision: 1n });
    for (const expectedRevision of ['no_stream', 'any', 'stream_exists'] as AppendExpectedRevision[]) {
      expect(await client.appendToStream('s-1', batch, { expectedRevision })).toEqual(original);
    }
    expect(original.position?.commit).toBeDefined();
  });

  it('writes again what its committed-ids cache forgot, when retried with any; refuses a batch repeating only some ids', async () => {
    const server = await node({ committedIdsCapacity: 2 });
    const client = clientOf(server);
    const first = event();
    await client.appendToStream('s-2', [first], { expectedRevision: 'any' });
    await client.appendToStream('s-2', [event(), event()], { expectedRevision: 'any' });
    await client.appendToStream('s-2', [first], { expectedRevision: 'any' });
    expect(server.streams.get('s-2')?.map((stored) => stored.id)).toHaveLength(4);
    const [a, b] = [event(), event()];
    await client.appendToStream('s-3', [a, b], { expectedRevision: 'no_stream' });
    await expect(client.appendToStream('s-3', [a, event()], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(WrongExpectedVersionError);
  });

  it('refuses a wrong expected revision with the actual one, and stream_exists on an absent stream', async () => {
    const client = clientOf(await node());
    await client.appendToStream('s-4', [event(), event()], { expectedRevision: 'no_stream' });
    const refusal = await client.appendToStream('s-4', [event()], { expectedRevision: 0n }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(WrongExpectedVersionError);
    expect((refusal as WrongExpectedVersionError).actualVersion).toBe(1n);
    await expect(client.appendToStream('s-absent', [event()], { expectedRevision: 'stream_exists' })).rejects.toBeInstanceOf(WrongExpectedVersionError);
  });

  it('refuses an append over MaxAppendSize, counting data, metadata and the type twice', async () => {
    const client = clientOf(await node({ maxAppendSize: 1000 }));
    const big = jsonEvent({ type: 'Big', data: { text: 'x'.repeat(1000) } });
    const refusal = await client.appendToStream('s-5', [big]).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MaxAppendSizeExceededError);
    expect((refusal as MaxAppendSizeExceededError).maxAppendSize).toBe(1000);
  });

  it('answers Timeout to an append whose deadline passed, and to one whose commit outlasts the write timeout, which still commits', async () => {
    const server = await node({ writeTimeoutMs: 100 });
    const client = clientOf(server);
    await expect(client.appendToStream('s-6', [event()], { deadline: -1000 })).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(server.streams.has('s-6')).toBe(false);
    let release: () => void = () => undefined;
    server.before = () => new Promise((resolve) => (release = resolve));
    await expect(client.appendToStream('s-7', [event()])).rejects.toBeInstanceOf(DeadlineExceededError);
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.streams.get('s-7')).toHaveLength(1);
  });

  it('on a follower: forwards writes, and answers a read requiring the leader with NotLeader naming it; the client then reconnects', async () => {
    const leader = await node();
    const follower = await node({ followerOf: leader });
    const client = clientOf(follower);
    await client.appendToStream('s-8', [event()]);
    const refusal = await (async () => {
      for await (const _ of client.readStream('s-8', { requiresLeader: true })) return null;
    })().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(NotLeaderError);
    expect((refusal as NotLeaderError).leader).toEqual({ address: leader.endpoint.host, port: leader.endpoint.port });
    const read: unknown[] = [];
    for await (const resolved of client.readStream('s-8', { requiresLeader: true })) read.push(resolved.event?.id);
    expect(read).toHaveLength(1);
  });

  it('fails every append pending on a BatchAppend call when it answers NotLeader', async () => {
    const server = await node();
    const client = clientOf(server);
    let release: () => void = () => undefined;
    server.before = (stream) => (stream === 's-held' ? new Promise((resolve) => (release = resolve)) : Promise.resolve());
    const held = client.appendToStream('s-held', [event()]).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    server.stepDown({ host: '127.0.0.1', port: 1 });
    await expect(client.appendToStream('s-9', [event()])).rejects.toBeInstanceOf(NotLeaderError);
    expect(await held).toBeInstanceOf(NotLeaderError);
    release();
  });

  it('reads $all with the server system events, positions strictly increasing byte offsets; a filtered subscription checkpoints', async () => {
    const client = clientOf(await node());
    for (let index = 0; index < 4; index++) await client.appendToStream(`s-10-${index}`, [event()]);
    const all: AllStreamResolvedEvent[] = [];
    for await (const resolved of client.readAll({ fromPosition: START })) all.push(resolved);
    expect(all[0].event?.streamId.startsWith('$')).toBe(true);
    const positions = all.map((resolved) => Number(resolved.event?.position.commit));
    positions.slice(1).forEach((position, index) => expect(position - positions[index]).toBeGreaterThan(1));

    const checkpoints: Position[] = [];
    const subscription = client.subscribeToAll({
      fromPosition: START,
      filter: eventTypeFilter({
        prefixes: ['Nothing'],
        maxSearchWindow: 2,
        checkpointInterval: 1,
        checkpointReached: (_, position) => void checkpoints.push(position),
      }),
    });
    subscription.on('data', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await subscription.unsubscribe();
    expect(checkpoints).toHaveLength(3);
    expect(checkpoints[2].commit).toBe(all[5].event?.position.commit);
  });
});
