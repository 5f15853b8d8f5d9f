/**
 * Conversions between the port's events and positions and the EventStoreDB client's.
 *
 * Positions. EventStoreDB orders `$all` by a {commit, prepare} pair of byte offsets in its
 * transaction log. Events appended over gRPC are never part of an explicit (TCP-era) transaction,
 * so each one is committed by its own record and its commit and prepare positions are equal
 * (servers from 20.6.1 report it so). The port's single number is therefore the commit position:
 * strictly increasing in `$all` order, and a byte offset, so it stays below 2^53 (8 PiB).
 * An `after` turns back into {commit: after, prepare: after}, a real record boundary as long as
 * it came from this adapter. The server's `fromPosition` is inclusive for reads and exclusive for
 * subscriptions; both are filtered again here by number, so either reading gives the port's rule.
 */
import {
  ANY,
  AllStreamResolvedEvent,
  AppendExpectedRevision,
  END,
  EventData,
  JSONType,
  NO_STREAM,
  Position,
  ReadPosition,
  ResolvedEvent,
  START,
  STREAM_EXISTS,
} from '@eventstore/db-client';
import { AuditedEvent, EventMetadata, ExpectedRevision, NewEvent, RecordedEvent, isSystemStream } from '../event-store.port';
import { isChainStream, splitStoredLink } from './organization-chain';

type StoredEsdbEvent = NonNullable<ResolvedEvent['event']> | NonNullable<AllStreamResolvedEvent['event']>;

export function toPositionNumber(position: Position): number {
  const value = Number(position.commit);
  if (!Number.isSafeInteger(value)) throw new Error(`EventStoreDB position ${position.commit} exceeds 2^53.`);
  return value;
}

function toEsdbPosition(position: number | bigint): Position {
  return { commit: BigInt(position), prepare: BigInt(position) };
}

export function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return STREAM_EXISTS;
  return BigInt(expected);
}

export function toEventData(event: NewEvent): EventData {
  return {
    id: event.id,
    contentType: 'application/json',
    type: event.type,
    // The client serialises with JSON.stringify, which takes any JSON value, not only objects.
    data: (event.data ?? null) as JSONType,
    metadata: event.metadata as JSONType,
  };
}

/** Events written by other tools may be binary; JSON bodies are still decoded. */
function decodeBody(body: unknown): unknown {
  if (!(body instanceof Uint8Array)) return body;
  const text = Buffer.from(body).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The server's own events, and the adapter's bookkeeping (the audit chain streams): never the domain's. */
function isSystemEvent(event: StoredEsdbEvent): boolean {
  return isSystemStream(event.streamId) || event.type.startsWith('$') || isChainStream(event.streamId);
}

/** The event as appended (its chain link, kept in the metadata, taken out) with its link. */
export function toAuditedEvent(event: StoredEsdbEvent, commitPosition?: bigint): AuditedEvent {
  const { event: recorded, chain } = splitStoredLink(toStoredEvent(event, commitPosition));
  return { ...recorded, chain };
}

export function toRecordedEvent(event: StoredEsdbEvent, commitPosition?: bigint): RecordedEvent {
  return splitStoredLink(toStoredEvent(event, commitPosition)).event;
}

/** The event as the server holds it, metadata and time included. */
function toStoredEvent(event: StoredEsdbEvent, commitPosition?: bigint): RecordedEvent {
  const position = event.position ?? (commitPosition === undefined ? undefined : toEsdbPosition(commitPosition));
  if (!position) {
    // Servers before 22.6 leave it out of stream reads; guessing one would corrupt checkpoints.
    throw new Error(`EventStoreDB reported no $all position for event ${event.id}: use server 22.10 or later.`);
  }
  return {
    id: event.id,
    type: event.type,
    data: decodeBody(event.data),
    metadata: decodeBody(event.metadata) as EventMetadata,
    streamName: event.streamId,
    revision: Number(event.revision),
    position: toPositionNumber(position),
    createdAt: event.created.toISOString(),
  };
}

/** A domain event of `$all`, or undefined for system events and unresolved links. */
export function toDomainEvent(resolved: AllStreamResolvedEvent): RecordedEvent | undefined {
  if (!resolved.event || isSystemEvent(resolved.event)) return undefined;
  return toRecordedEvent(resolved.event, resolved.commitPosition);
}

/** toDomainEvent with the event's link in its organization's chain. */
export function toAuditedDomainEvent(resolved: AllStreamResolvedEvent): AuditedEvent | undefined {
  if (!resolved.event || isSystemEvent(resolved.event)) return undefined;
  return toAuditedEvent(resolved.event, resolved.commitPosition);
}

export function readStart(after: number | undefined, direction: 'forwards' | 'backwards'): ReadPosition {
  if (after === undefined) return direction === 'forwards' ? START : END;
  return after < 0 ? START : toEsdbPosition(after);
}
