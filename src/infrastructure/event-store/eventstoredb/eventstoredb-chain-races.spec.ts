/**
 * The audit chain on EventStoreDB where writers meet: instances appending the same derived-id
 * events (two sagas reacting to one event), and a writer whose claim stalls. Over the gRPC test
 * server (test/support/eventstoredb/server.ts), whose hooks hold a commit to set up the race.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { NewEvent } from '../event-store.port';
import { VerifyAuditChainHandler } from '#modules/audit/verify-chain/verify-chain.handler';
import { VerifyAuditChain } from '#modules/audit/verify-chain/verify-chain.query';
import { EventStoreDbTestServer } from '../../../../test/support/eventstoredb/server';

const servers: EventStoreDbTestServer[] = [];
const opened: EventStoreDbEventStore[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function startServer(): Promise<EventStoreDbTestServer> {
  const server = await EventStoreDbTestServer.start();
  servers.push(server);
  return server;
}

async function instance(server: EventStoreDbTestServer, chainLeaseMs = 30_000): Promise<EventStoreDbEventStore> {
  const store = await EventStoreDbEventStore.connect(server.url(), { chainLeaseMs });
  opened.push(store);
  return store;
}

function orgEvent(type: string): NewEvent {
  const correlationId = randomUUID();
  return {
    id: randomUUID(),
    type,
    data: { at: randomUUID() },
    metadata: { organization: 'acme', actor: 'system:saga', correlationId, causationId: correlationId },
  };
}

const verify = (store: EventStoreDbEventStore) => new VerifyAuditChainHandler(store, new KeyRing(store, randomBytes(32))).execute(new VerifyAuditChain('acme'));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the audit chain on EventStoreDB, where writers meet', () => {
  it('stays one line when a second instance appends events whose ids the first is storing, whatever either appends next', async () => {
    const server = await startServer();
    const [first, second] = [await instance(server), await instance(server)];
    await first.append('batch-1', [orgEvent('BatchStarted')], 'no_stream');
    // The first instance's events reach the server a moment after its claim: the second sees the claim in flight.
    server.before = async (stream) => {
      if (stream === 'run-1') await pause(150);
    };
    const finished = [orgEvent('RunFinished')];
    const appends = [first.append('run-1', finished, 'no_stream'), pause(30).then(() => second.append('run-1', structuredClone(finished), 'no_stream'))];
    const [original, retried] = await Promise.all(appends);
    // The server answers the second with the ORIGINAL's position: it stored nothing.
    expect(retried).toEqual(original);
    server.before = undefined;
    // The second instance appends next, before anyone else settles its claim.
    await second.append('batch-1', [orgEvent('BatchFinished')], 0);
    await first.append('batch-2', [orgEvent('BatchStarted')], 'no_stream');
    expect(await verify(first)).toEqual({ ok: true, checked: 4, unchained: 0, firstBreak: null });
  });

  const chainTypes = async (store: EventStoreDbEventStore) => (await store.readStream('auditchain-acme')).map((event) => event.type);

  it.each([
    ['the stream was deleted for good (StreamDeleted)', (server: EventStoreDbTestServer) => server.log.tombstone('batch-gone')],
    ["the stream's access control refuses the writer (AccessDenied)", (server: EventStoreDbTestServer) => server.denied.add('batch-gone')],
    [
      'the node lost leadership as the events reached it (NotLeader)',
      (server: EventStoreDbTestServer) => {
        server.before = async (stream) => {
          if (stream !== 'batch-gone') return;
          server.stepDown();
          // The election ends before the writer hears back: the leader it is sent to takes writes again.
          setImmediate(() => (server.notLeader = null));
        };
      },
    ],
  ])(
    'voids at once the claim of an append the server refused outright, %s: the next writer does not wait for the lease',
    async (_, refuse) => {
      const server = await startServer();
      const [refused, next] = [await instance(server, 60_000), await instance(server, 60_000)];
      await next.append('prompt-acme.p', [orgEvent('PromptVersionCreated')], 'no_stream');
      refuse(server);
      await expect(refused.append('batch-gone', [orgEvent('BatchStarted')], 'no_stream')).rejects.toThrow();
      server.before = undefined;
      await next.append('prompt-acme.p', [orgEvent('PromptChannelPromoted')], 0);
      expect(await chainTypes(next)).toEqual(['AuditChainClaimed', 'AuditChainClaimed', 'AuditChainClaimVoided', 'AuditChainClaimed']);
      expect(await verify(next)).toEqual({ ok: true, checked: 2, unchained: 0, firstBreak: null });
    },
    15_000,
  );

  it("keeps one connection's failure to its own appends: another store's append in flight meanwhile is answered as the server stored it", async () => {
    const server = await startServer();
    const [failing, other] = [await instance(server), await instance(server)];
    let release: () => void = () => undefined;
    server.before = (stream) => (stream === 'batch-other' ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve());
    server.after = async (stream) => {
      if (stream === 'batch-failing') throw new Error('14 UNAVAILABLE: Connection dropped');
    };
    const inFlight = other.append('batch-other', [orgEvent('BatchStarted')], 'no_stream');
    await pause(50);
    // The failing store's connection drops after the server stored its append: it reads the log to answer.
    await failing.append('batch-failing', [{ ...orgEvent('BatchStarted'), metadata: { ...orgEvent('x').metadata, organization: 'globex' } }], 'no_stream');
    release();
    expect(await inFlight).toEqual({ nextExpectedRevision: 0, position: (await other.readStream('batch-other'))[0].position });
  });
});
