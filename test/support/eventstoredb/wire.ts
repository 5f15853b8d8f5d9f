/**
 * The EventStoreDB test server's messages, built with the client's own generated protocol classes
 * (`@eventstore/db-client/generated`, compiled from the server's .proto files), so that what
 * travels is what a real server sends: recorded events, error statuses with their packed details,
 * and the exception metadata the client reads.
 */
import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerErrorResponse } from '@grpc/grpc-js';
import { Any } from 'google-protobuf/google/protobuf/any_pb';
import { Empty as ProtobufEmpty } from 'google-protobuf/google/protobuf/empty_pb';
import {
  AccessDenied,
  MaximumAppendSizeExceeded,
  StreamDeleted,
  StreamIdentifier,
  Timeout,
  UUID,
  WrongExpectedVersion,
} from '@eventstore/db-client/generated/shared_pb';
import { Status } from '@eventstore/db-client/generated/status_pb';
import { Code } from '@eventstore/db-client/generated/code_pb';
import { ReadResp } from '@eventstore/db-client/generated/streams_pb';
import type { Expected, StoredEvent } from './test-log';

/** EventStoreDB's `created`: ticks (100 ns) since the Unix epoch. */
const TICKS_PER_MS = 10_000n;

export function streamIdentifier(stream: string): StreamIdentifier {
  return new StreamIdentifier().setStreamName(Buffer.from(stream, 'utf8'));
}

export function streamName(identifier: StreamIdentifier | undefined): string {
  return identifier ? Buffer.from(identifier.getStreamName_asU8()).toString('utf8') : '';
}

export function uuidString(uuid: UUID | undefined): string {
  if (!uuid) throw new Error('a message without its UUID');
  if (uuid.hasString()) return uuid.getString();
  const structured = uuid.getStructured();
  if (!structured) throw new Error('a UUID with neither form');
  const bytes = Buffer.alloc(16);
  bytes.writeBigUInt64BE(BigInt.asUintN(64, BigInt(structured.getMostSignificantBits())), 0);
  bytes.writeBigUInt64BE(BigInt.asUintN(64, BigInt(structured.getLeastSignificantBits())), 8);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A bytes field as protobuf hands it over: a Uint8Array once decoded, base64 while still a string. */
export function bytesOf(value: Uint8Array | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.from(value);
}

/**
 * One event as Streams.Read sends it: its id, stream, revision, both positions (servers from
 * 22.6 send them on stream reads too), `type`, `content-type` and `created` in the metadata map,
 * then the custom metadata and data bytes; the ReadEvent carries the commit position.
 */
export function readEvent(event: StoredEvent): ReadResp {
  const recorded = new ReadResp.ReadEvent.RecordedEvent()
    .setId(new UUID().setString(event.id))
    .setStreamIdentifier(streamIdentifier(event.stream))
    .setStreamRevision(String(event.revision))
    .setPreparePosition(String(event.position))
    .setCommitPosition(String(event.position))
    .setCustomMetadata(event.metadata)
    .setData(event.data);
  recorded
    .getMetadataMap()
    .set('type', event.type)
    .set('content-type', event.contentType)
    .set('created', String(BigInt(event.createdMs) * TICKS_PER_MS));
  return new ReadResp().setEvent(new ReadResp.ReadEvent().setEvent(recorded).setCommitPosition(String(event.position)));
}

function packed(message: { serializeBinary(): Uint8Array }, typeName: string): Any {
  const any = new Any();
  any.pack(message.serializeBinary(), typeName);
  return any;
}

/** `Status.WrongExpectedVersion` of Streams.BatchAppend: ALREADY_EXISTS with the revisions packed in its details. */
export function wrongExpectedVersionStatus(current: number, expected: Expected): Status {
  const details = new WrongExpectedVersion();
  if (current < 0) details.setCurrentNoStream(new ProtobufEmpty());
  else details.setCurrentStreamRevision(String(current));
  if (expected.kind === 'any') details.setExpectedAny(new ProtobufEmpty());
  else if (expected.kind === 'no_stream') details.setExpectedNoStream(new ProtobufEmpty());
  else if (expected.kind === 'stream_exists') details.setExpectedStreamExists(new ProtobufEmpty());
  else details.setExpectedStreamPosition(String(expected.revision));
  return new Status().setCode(Code.ALREADY_EXISTS).setMessage('WrongExpectedVersion').setDetails(packed(details, 'event_store.client.WrongExpectedVersion'));
}

/** `Status.MaximumAppendSizeExceeded`: INVALID_ARGUMENT with the server's limit. */
export function maximumAppendSizeStatus(limit: number): Status {
  const details = new MaximumAppendSizeExceeded().setMaxappendsize(limit);
  return new Status()
    .setCode(Code.INVALID_ARGUMENT)
    .setMessage('MaximumAppendSizeExceeded')
    .setDetails(packed(details, 'event_store.client.MaximumAppendSizeExceeded'));
}

/** `Status.StreamDeleted`: NOT_FOUND with the stream packed in its details. */
export function streamDeletedStatus(stream: string): Status {
  const details = new StreamDeleted().setStreamIdentifier(streamIdentifier(stream));
  return new Status().setCode(Code.NOT_FOUND).setMessage('StreamDeleted').setDetails(packed(details, 'event_store.client.StreamDeleted'));
}

/** `Status.AccessDenied`: PERMISSION_DENIED, for a writer the stream's ACL does not let in. */
export function accessDeniedStatus(): Status {
  return new Status().setCode(Code.PERMISSION_DENIED).setMessage('AccessDenied').setDetails(packed(new AccessDenied(), 'event_store.client.AccessDenied'));
}

/** `Status.Timeout`: a deadline passed before the request was whole, or the commit timed out. */
export function timeoutStatus(): Status {
  return new Status().setCode(Code.DEADLINE_EXCEEDED).setMessage('Timeout').setDetails(packed(new Timeout(), 'event_store.client.Timeout'));
}

/** `RpcExceptions.LeaderInfo`: NOT_FOUND with `exception: not-leader` and the leader's endpoint. */
export function notLeaderError(leader: { host: string; port: number }): ServerErrorResponse {
  const metadata = new Metadata();
  metadata.set('exception', 'not-leader');
  metadata.set('leader-endpoint-host', leader.host);
  metadata.set('leader-endpoint-port', String(leader.port));
  return Object.assign(new Error('Leader info available'), { code: GrpcStatus.NOT_FOUND, details: 'Leader info available', metadata });
}

/** `RpcExceptions.WrongExpectedVersion` of the unary Append's callers is an answer, not an error; this is the connection failing. */
export function unavailableError(message: string): ServerErrorResponse {
  return Object.assign(new Error(message), { code: GrpcStatus.UNAVAILABLE, details: message, metadata: new Metadata() });
}

/** `RpcExceptions.MaxAppendSizeExceeded` of the unary Append. */
export function maximumAppendSizeError(limit: number): ServerErrorResponse {
  const metadata = new Metadata();
  metadata.set('exception', 'maximum-append-size-exceeded');
  metadata.set('maximum-append-size', String(limit));
  return Object.assign(new Error(`Maximum Append Size of ${limit} Exceeded.`), {
    code: GrpcStatus.INVALID_ARGUMENT,
    details: `Maximum Append Size of ${limit} Exceeded.`,
    metadata,
  });
}

/** `RpcExceptions.StreamDeleted` of the unary Append. */
export function streamDeletedError(stream: string): ServerErrorResponse {
  const metadata = new Metadata();
  metadata.set('exception', 'stream-deleted');
  metadata.set('stream-name', stream);
  return Object.assign(new Error(`Event stream '${stream}' is deleted.`), {
    code: GrpcStatus.FAILED_PRECONDITION,
    details: `Event stream '${stream}' is deleted.`,
    metadata,
  });
}

/** `RpcExceptions.AccessDenied` of the unary Append: PERMISSION_DENIED with `exception: access-denied`. */
export function accessDeniedError(): ServerErrorResponse {
  const metadata = new Metadata();
  metadata.set('exception', 'access-denied');
  return Object.assign(new Error('Access Denied'), { code: GrpcStatus.PERMISSION_DENIED, details: 'Access Denied', metadata });
}
