/**
 * The EventStore port. Its semantics mirror EventStoreDB's, so the embedded SQLite adapter and
 * the EventStoreDB adapter are interchangeable and pass one contract suite
 * (event-store.contract.ts).
 */

import type { EventMetadata } from '#shared/domain-event';
import type { ChainLink } from '#shared/event-chain';

// Defined in shared/, so that domain code names it without depending on the store; re-exported for the port's users.
export type { EventMetadata } from '#shared/domain-event';

/**
 * A metadata member that marks an event as liveness bookkeeping (a lease renewal), not an audit
 * fact: stores leave it out of its organization's hash chain and of `readOrganization`, so that
 * a heartbeat never waits on the chain (EventStoreDB serializes an organization's chained appends).
 */
export const LIVENESS_METADATA_KEY = 'liveness';

export function isLiveness(metadata: EventMetadata): boolean {
  return metadata[LIVENESS_METADATA_KEY] === true;
}

export interface NewEvent<Type extends string = string, Data = unknown> {
  /** A UUID. Appending the same ids to the same stream again adds nothing. */
  id: string;
  type: Type;
  data: Data;
  metadata: EventMetadata;
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  id: string;
  type: Type;
  data: Data;
  metadata: EventMetadata;
  streamName: string;
  /** Revision inside its stream, from 0. */
  revision: number;
  /** Global position in `$all`: strictly increasing, not necessarily contiguous. */
  position: number;
  /** ISO-8601 UTC with milliseconds, set by the store. */
  createdAt: string;
}

/**
 * `no_stream`: the stream must not exist. `stream_exists`: it must exist. `any`: no check.
 * A number: the stream's current last revision must be exactly that.
 */
export type ExpectedRevision = 'no_stream' | 'any' | 'stream_exists' | number;

export interface AppendResult {
  /** The stream's last revision after the append (the revision to expect next time). */
  nextExpectedRevision: number;
  /** Global position of the last event of the append. */
  position: number;
}

export type Direction = 'forwards' | 'backwards';

export interface ReadStreamOptions {
  direction?: Direction;
  /** Inclusive. Defaults to the first revision forwards and the last one backwards. */
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  direction?: Direction;
  /**
   * Exclusive: events strictly after this position (forwards) or strictly before it
   * (backwards). Omit it to start at the beginning (forwards) or the end (backwards).
   */
  after?: number;
  maxCount?: number;
}

/** One organization's events, oldest first, narrowed by the audit's filters (all optional). */
export interface OrganizationReadOptions {
  organization: string;
  /** Exclusive: events strictly after this position. */
  after?: number;
  maxCount: number;
  stream?: string;
  /** Stream categories: the part of the stream name before its first `-`. */
  categories?: string[];
  type?: string;
  /** The metadata's actor. */
  actor?: string;
  /** Inclusive bounds on the stored time (ISO-8601 UTC with milliseconds). */
  from?: string;
  to?: string;
}

/** An event with its link in the organization's hash chain; null for events stored before the chain existed. */
export interface AuditedEvent extends RecordedEvent {
  chain: ChainLink | null;
}

export interface SubscribeToAllOptions {
  /** Exclusive; omit it to start from the beginning of the log. */
  after?: number;
}

/**
 * A catch-up subscription: it delivers the stored events after the start position, then goes
 * live and keeps delivering new events, in position order, with no gap and no repeat.
 * The iterator ends when `close()` is called.
 */
export interface AllSubscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

export interface EventStore {
  append(stream: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /**
   * True when appends are stored in the order they are made, even before the first is
   * acknowledged (one writer committing in call order, as the embedded store's group commit):
   * an append made right after another, to any stream, is never stored before it. Stores that
   * send appends concurrently (EventStoreDB) leave it out.
   */
  readonly appendsInCallOrder?: boolean;
  /** An absent stream reads as an empty array. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** One organization's events in position order, read through an index, never by scanning the whole log. */
  readOrganization(options: OrganizationReadOptions): Promise<AuditedEvent[]>;
  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription;
  /** The position of the newest event in the log, or -1 when it is empty. */
  headPosition(): Promise<number>;
  /**
   * Why a subscription of this store cannot receive events now (it dropped and is resubscribing),
   * or null. Stores whose subscriptions cannot drop leave it out.
   */
  subscriptionFault?(): string | null;
  /**
   * Where an organization's chain ends by the store's own record kept apart from the events
   * (EventStoreDB's chain stream, SQLite's head table), or null without one. Stores whose chain
   * is only in the events leave it out.
   */
  chainEnd?(organization: string): Promise<ChainEnd | null>;
  close(): Promise<void>;
}

/** What the store's own record says an organization's chain ends with (see EventStore.chainEnd). */
export interface ChainEnd {
  /**
   * The hash the chain's last event has. Two while the last append's claim is unsettled: the
   * chain then ends before that append or with it. Null: the chain may be empty.
   */
  hashes: Array<string | null>;
  /** Where that last event is, when the record says. */
  at: { stream: string; revision: number } | null;
  /** The store keeps such records but has none for the organization: nothing chained yet, or the record was deleted. */
  absent?: boolean;
  /**
   * The record is a claim whose events are not in the log although they were due long ago: removed,
   * or never sent by a writer that stopped (EventStoreDB cannot tell the two apart).
   */
  claimOnly?: boolean;
}

export const EVENT_STORE = Symbol('EventStore');

/** The typed error of an append whose expected revision did not hold. */
export class WrongExpectedVersion extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** The stream's actual last revision, or -1 when it does not exist. */
    readonly actual: number,
  ) {
    super(`Stream "${stream}" was expected at revision ${String(expected)} but is at ${actual}.`);
    this.name = 'WrongExpectedVersion';
  }
}

/** Raised when the same event ids are re-appended only partly (some ids new, some stored). */
export class IdempotencyViolation extends Error {
  constructor(readonly stream: string) {
    super(`Some, but not all, of the events appended to "${stream}" were already stored.`);
    this.name = 'IdempotencyViolation';
  }
}

/** A stream's category: the part of its name before the first `-` (`batch`, `trial`, `prompt`…). */
export function categoryOf(stream: string): string {
  const dash = stream.indexOf('-');
  return dash === -1 ? stream : stream.slice(0, dash);
}

/**
 * Raised when an append is larger than the store takes in one write (EventStoreDB's MaxAppendSize,
 * 1 MiB by default). Nothing of it was stored; the same append will always be refused.
 */
export class AppendTooLarge extends Error {
  constructor(
    readonly stream: string,
    /** The append's size as the store counts it (at least). */
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`An append of ${bytes} bytes to "${stream}" exceeds the event store's limit of ${limit} bytes per append.`);
    this.name = 'AppendTooLarge';
  }
}

/** The most one stored event may weigh (its type, data and metadata as JSON), large values moved out included. */
export const MAX_EVENT_BYTES = 512 * 1024;

/**
 * Raised when one event would still weigh more than MAX_EVENT_BYTES after its large values were
 * moved to the blob store. Nothing of the append was stored. An AppendTooLarge, so whoever
 * handles a refused append handles this one too.
 */
export class EventTooLarge extends AppendTooLarge {
  constructor(
    stream: string,
    readonly eventType: string,
    bytes: number,
  ) {
    super(stream, bytes, MAX_EVENT_BYTES);
    this.message = `A ${eventType} event of ${bytes} bytes for "${stream}" exceeds the limit of ${MAX_EVENT_BYTES} bytes per event, even with its large values in the blob store.`;
    this.name = 'EventTooLarge';
  }
}

/** `$`-prefixed streams belong to the store itself; domain code never writes them. */
export function isSystemStream(stream: string): boolean {
  return stream.startsWith('$');
}
