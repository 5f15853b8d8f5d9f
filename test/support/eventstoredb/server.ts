/**
 * An EventStoreDB test server: a gRPC server on 127.0.0.1 built with `@grpc/grpc-js` on the
 * client's own protocol definitions (the service descriptors and messages `@eventstore/db-client`
 * generates from the server's .proto files), so that the real client speaks the real protocol to
 * it. It follows the server's rules where the adapters depend on them; each rule says which
 * behaviour it models: idempotent appends answered with the ORIGINAL's position (test-log.ts),
 * expected revisions, `$all` reads and filtered subscriptions with checkpoints (reads.ts), request
 * deadlines, the append size limit, NotLeader and the write timeout (appends.ts).
 *
 * For tests: `before` and `after` run around each commit (a throw there is the connection failing;
 * a promise that never settles is a writer that died, before or after the server stored its
 * events), `tamper` edits a stored event as someone with the server's files could, `remove`
 * deletes and scavenges a stream, `stepDown` makes the node answer writes with NotLeader. Several
 * nodes may share one log: a follower serves reads and forwards writes, and answers what requires
 * the leader with NotLeader naming it, as a cluster's follower does.
 */
import { Metadata, Server, ServerCredentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream } from '@grpc/grpc-js';
import { Empty } from '@eventstore/db-client/generated/shared_pb';
import { ServerFeaturesService } from '@eventstore/db-client/generated/serverfeatures_grpc_pb';
import { SupportedMethod, SupportedMethods } from '@eventstore/db-client/generated/serverfeatures_pb';
import { StreamsService } from '@eventstore/db-client/generated/streams_grpc_pb';
import type { ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb';
import { append, AppendHost, batchAppend, NotLeaderAnswer } from './appends';
import { readAll, readStream, subscribeToAll } from './reads';
import { CommitDecision, DEFAULT_MAX_APPEND_SIZE, Expected, ProposedEvent, StoredEvent, TestLog } from './test-log';
import { notLeaderError } from './wire';

/** Runs around a commit; it may throw (the connection failed) or never settle (the writer's process died). */
export type CommitHook = (stream: string, events: readonly ProposedEvent[]) => Promise<void>;

export interface TestServerOptions {
  /** Another node's log: this node is then a follower of `leader`. */
  followerOf?: EventStoreDbTestServer;
  /** The server's MaxAppendSize (1 MiB by default). */
  maxAppendSize?: number;
  /** The server's WriteTimeout (2 s by default). */
  writeTimeoutMs?: number;
  /** Whether ServerFeatures lists BatchAppend (servers since 21.10 do): without it, the client uses Append. */
  batchAppend?: boolean;
  /** How many recent event ids the server keeps to recognise a retry sent with `any`. */
  committedIdsCapacity?: number;
}

const SERVER_VERSION = '24.10.0';

export class EventStoreDbTestServer implements AppendHost {
  readonly log: TestLog;
  readonly maxAppendSize: number;
  readonly writeTimeoutMs: number;
  readonly deadlines: Array<{ stream: string; deadlineMs: number }> = [];
  /** Streams of the appends refused for their expected revision, in order. */
  readonly refused: string[] = [];
  notLeader: { host: string; port: number } | null = null;
  before: CommitHook | undefined;
  after: CommitHook | undefined;
  /** The calls this node answered, by kind: what a client's round trips cost, counted where they arrive. */
  readonly calls = { streamReads: 0, allReads: 0, subscriptions: 0, appends: 0 };
  /** Events sent on `$all` reads and subscriptions, by stream category (the name before its first `-`). */
  readonly sentFromAll = new Map<string, number>();
  /** Streams whose access control refuses this server's writers. */
  readonly denied = new Set<string>();
  private port = 0;

  private constructor(
    private readonly server: Server,
    private readonly options: TestServerOptions,
  ) {
    this.log = options.followerOf?.log ?? new TestLog(options.committedIdsCapacity);
    this.maxAppendSize = options.maxAppendSize ?? DEFAULT_MAX_APPEND_SIZE;
    this.writeTimeoutMs = options.writeTimeoutMs ?? 2_000;
  }

  static async start(options: TestServerOptions = {}): Promise<EventStoreDbTestServer> {
    const server = new Server();
    const node = new EventStoreDbTestServer(server, options);
    server.addService(StreamsService, {
      read: (call: ServerWritableStream<ReadReq, ReadResp>) => node.read(call),
      append: (call: Parameters<typeof append>[1], callback: Parameters<typeof append>[2]) => {
        node.calls.appends += 1;
        append(node, call, callback);
      },
      batchAppend: (call: Parameters<typeof batchAppend>[1]) => batchAppend(node, call),
    });
    server.addService(ServerFeaturesService, {
      getSupportedMethods: (_call: ServerUnaryCall<Empty, SupportedMethods>, callback: sendUnaryData<SupportedMethods>) => node.supportedMethods(callback),
    });
    node.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) => (error ? reject(error) : resolve(port))),
    );
    return node;
  }

  /** The leader's endpoint: this node's, or the one it follows. */
  get endpoint(): { host: string; port: number } {
    return { host: '127.0.0.1', port: this.options.followerOf?.port ?? this.port };
  }

  /** A connection string for this node, with client options such as `throwOnAppendFailure=false`. */
  url(options: Record<string, string> = {}): string {
    const query = new URLSearchParams({ tls: 'false', ...options });
    return `esdb://127.0.0.1:${this.port}?${query.toString()}`;
  }

  get streams(): Map<string, StoredEvent[]> {
    return this.log.streams;
  }

  tamper(stream: string, revision: number, change: (event: StoredEvent) => void): void {
    this.log.tamper(stream, revision, change);
  }

  remove(stream: string): void {
    this.log.remove(stream);
  }

  mayWrite(stream: string): boolean {
    return !this.denied.has(stream);
  }

  /** The node loses leadership to `leader`: writes, and reads requiring the leader, answer NotLeader. */
  stepDown(leader: { host: string; port: number } = { host: '127.0.0.1', port: this.port }): void {
    this.notLeader = leader;
  }

  async commit(stream: string, expected: Expected, events: ProposedEvent[]): Promise<CommitDecision> {
    await this.before?.(stream, events);
    // The request manager's NotHandled(NotLeader): a node that is not the leader when the write reaches it stores nothing.
    if (this.notLeader) throw new NotLeaderAnswer(this.notLeader);
    const decision = this.log.commit(stream, expected, events);
    if (decision.kind === 'wrong_expected_version') this.refused.push(stream);
    await this.after?.(stream, events);
    return decision;
  }

  async stop(): Promise<void> {
    this.server.forceShutdown();
    await new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * Streams.Read. A read sent with `requires-leader: true` to a node that is not the leader is
   * answered NotLeader with the leader's endpoint (RpcExceptions.LeaderInfo); the client then
   * reconnects there. Stream subscriptions are not modelled (the adapter subscribes to `$all`).
   */
  private read(call: ServerWritableStream<ReadReq, ReadResp>): void {
    const options = call.request.getOptions();
    const leader = this.options.followerOf ? this.endpoint : this.notLeader;
    if (leader && requiresLeader(call.metadata)) {
      call.emit('error', notLeaderError(leader));
      return;
    }
    if (!options) return void call.emit('error', { code: GrpcStatus.INVALID_ARGUMENT, details: 'Read without options' });
    const sent = (event: StoredEvent) => {
      const category = event.stream.split('-')[0];
      this.sentFromAll.set(category, (this.sentFromAll.get(category) ?? 0) + 1);
    };
    if (options.hasSubscription()) {
      if (options.hasAll()) {
        this.calls.subscriptions += 1;
        subscribeToAll(call, this.log, options, sent);
        return;
      }
      return void call.emit('error', { code: GrpcStatus.UNIMPLEMENTED, details: 'stream subscriptions are not modelled' });
    }
    if (options.hasAll()) {
      this.calls.allReads += 1;
      readAll(call, this.log, options, sent);
      return;
    }
    this.calls.streamReads += 1;
    readStream(call, this.log, options);
  }

  /** ServerFeatures.GetSupportedMethods: what the client asks before choosing BatchAppend over Append. */
  private supportedMethods(callback: sendUnaryData<SupportedMethods>): void {
    const method = (service: string, name: string) => new SupportedMethod().setServiceName(service).setMethodName(name);
    const methods = [
      method('event_store.client.streams.streams', 'read'),
      method('event_store.client.streams.streams', 'append'),
      method('event_store.client.server_features.serverfeatures', 'getsupportedmethods'),
    ];
    if (this.options.batchAppend !== false) methods.push(method('event_store.client.streams.streams', 'batchappend'));
    callback(null, new SupportedMethods().setEventStoreServerVersion(SERVER_VERSION).setMethodsList(methods));
  }
}

function requiresLeader(metadata: Metadata): boolean {
  return metadata.get('requires-leader').some((value) => String(value).toLowerCase() === 'true');
}
