/**
 * `$all` reads filtered on the server by stream name. The client (pinned 6.2.1) filters only its
 * subscriptions; its `readAll` always sends "no filter". This builds the same Streams.Read request
 * with a stream-name filter, and sends it through the client's own connection, call arguments and
 * read stream (not part of its public face: a client upgrade checks them first).
 */
import { END, START, streamNameFilter } from '@eventstore/db-client';
import type {
  AllStreamResolvedEvent,
  AllStreamSubscription,
  EventStoreDBClient,
  Position,
  ReadPosition,
  RegexFilter,
  StreamingRead,
} from '@eventstore/db-client';
import type { Readable } from 'node:stream';
import type { CallOptions, ClientReadableStream, Metadata } from '@grpc/grpc-js';
import { Empty } from '@eventstore/db-client/generated/shared_pb';
import { StreamsClient } from '@eventstore/db-client/generated/streams_grpc_pb';
import { ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb';
import { ReadStream } from '@eventstore/db-client/dist/streams/utils/ReadStream';
import { convertGrpcEvent } from '@eventstore/db-client/dist/utils/convertGrpcEvent';
import { CHAIN_STREAM_PREFIX } from './organization-chain';

/**
 * The streams the domain's readers see: neither the server's (`$`-prefixed) nor the adapter's
 * bookkeeping (`auditchain-{organization}`). .NET and JavaScript read this lookahead alike.
 */
export const DOMAIN_STREAMS = `^(?!\\$|${CHAIN_STREAM_PREFIX})`;
/** The chain streams alone. */
export const CHAIN_STREAMS = `^${CHAIN_STREAM_PREFIX}`;

/** How far the server searched a filtered subscription, passed on in order with its events. */
export interface SearchedThrough {
  searchedThrough: Position;
}

/**
 * The subscription's filter: domain streams only. The server sends a checkpoint each time it has
 * searched past a window of events, matching or not; it is pushed into the subscription's own
 * stream, between the events it came between, so the reader moves its position past what the
 * server skipped exactly when it has read every event before it.
 */
export function domainStreamsFilter(): RegexFilter {
  return streamNameFilter({
    regex: DOMAIN_STREAMS,
    checkpointReached: (subscription: AllStreamSubscription, position: Position) => {
      const searched: SearchedThrough = { searchedThrough: position };
      (subscription as unknown as Readable).push(searched);
    },
  });
}

export interface FilteredReadOptions {
  /** Matched against each event's stream name, on the server. */
  streamRegex: string;
  fromPosition?: ReadPosition;
  backwards?: boolean;
  /** Counts matching events only (the server's filtered read). */
  maxCount?: number;
}

interface ClientInternals {
  GRPCStreamCreator: (
    client: typeof StreamsClient,
    debugName: string,
    creator: (client: StreamsClient) => ClientReadableStream<ReadResp>,
  ) => () => Promise<ClientReadableStream<ReadResp>>;
  callArguments: (options: { requiresLeader?: boolean }, callOptions: { deadline: number }) => [Metadata, CallOptions];
}

/** Streams.Read of `$all` as the client's readAll sends it, with a stream-name filter. */
export function readAllFiltered(client: EventStoreDBClient, options: FilteredReadOptions): StreamingRead<AllStreamResolvedEvent> {
  const all = new ReadReq.Options.AllOptions();
  const from = options.fromPosition ?? (options.backwards ? END : START);
  if (from === START) all.setStart(new Empty());
  else if (from === END) all.setEnd(new Empty());
  else all.setPosition(new ReadReq.Options.Position().setCommitPosition(from.commit.toString(10)).setPreparePosition(from.prepare.toString(10)));
  const filter = new ReadReq.Options.FilterOptions()
    .setStreamIdentifier(new ReadReq.Options.FilterOptions.Expression().setRegex(options.streamRegex))
    .setCount(new Empty())
    .setCheckpointintervalmultiplier(1);
  const request = new ReadReq().setOptions(
    new ReadReq.Options()
      .setAll(all)
      .setResolveLinks(false)
      .setCount(String(options.maxCount ?? Number.MAX_SAFE_INTEGER))
      .setUuidOption(new ReadReq.Options.UUIDOption().setString(new Empty()))
      .setFilter(filter)
      .setReadDirection(options.backwards ? ReadReq.Options.ReadDirection.BACKWARDS : ReadReq.Options.ReadDirection.FORWARDS),
  );
  const internals = client as unknown as ClientInternals;
  const open = internals.GRPCStreamCreator(StreamsClient, 'readAll', (streams) =>
    streams.read(request, ...internals.callArguments({}, { deadline: Number.POSITIVE_INFINITY })),
  );
  return new ReadStream(open, convertGrpcEvent, {});
}
