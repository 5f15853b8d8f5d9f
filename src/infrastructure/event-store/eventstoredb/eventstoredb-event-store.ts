import {
  AllStreamResolvedEvent,
  AppendResult as EsdbAppendResult,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  MaxAppendSizeExceededError,
  NO_STREAM,
  NotLeaderError,
  ResolvedEvent,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
// The client's own debug namespaces and unary append (pinned 6.2.1; not part of its public face).
import { append as appendOnItsOwnCall } from '@eventstore/db-client/dist/streams/appendToStream/append';
import { debug as clientDebug } from '@eventstore/db-client/dist/utils/debug';
import type { ChainKey } from '#shared/event-chain';
import {
  AllSubscription,
  AppendResult,
  AppendTooLarge,
  EventStore,
  ExpectedRevision,
  NewEvent,
  OrganizationReadOptions,
  AuditedEvent,
  ChainEnd,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
  WrongExpectedVersion,
} from '../event-store.port';
import { classifiedAppendError } from './append-errors';
import { appendSize } from './append-size';
import { ChainedAppends, ChainIo, DEFAULT_CHAIN_LEASE_MS } from './chained-appends';
import {
  readStart,
  toAuditedDomainEvent,
  toAuditedEvent,
  toDomainEvent,
  toEsdbExpected,
  toEventData,
  toPositionNumber,
  toRecordedEvent,
} from './eventstoredb-events';
import { CHAIN_STREAMS, DOMAIN_STREAMS, domainStreamsFilter, readAllFiltered } from './filtered-read';
import { KnownEventIds } from './known-event-ids';
import { organizationsOf } from './organization-chain';
import { OrganizationReads } from './organization-reads';
import { DEFAULT_RESUME_POLICY, ResumePolicy, ResumingAllSubscription } from './resuming-subscription';

/** EventStoreDB's default MaxAppendSize: the most one append may carry. */
export const DEFAULT_MAX_APPEND_BYTES = 1024 * 1024;

export interface EventStoreDbOptions {
  /** The server's MaxAppendSize, when it was changed from 1 MiB. */
  maxAppendBytes?: number;
  /** How a dropped subscription is resumed, and who hears of the drop. */
  resume?: ResumePolicy;
  /** How long a claim on an organization's audit chain whose events never came holds the chain (see chained-appends.ts). */
  chainLeaseMs?: number;
  /** The key the organizations' chain links are computed under; without one (tests, tools) links are unkeyed sha256. */
  chainKey?: ChainKey;
}

type WriteResult = AppendResult & { recognisedRetry: boolean };

/** The EventStoreDB adapter, for deployments that run a server instead of the embedded file. */
export class EventStoreDbEventStore implements EventStore {
  private readonly subscriptions = new Set<ResumingAllSubscription>();
  // From the leader: a follower may not have the retry's original yet, and then it would be written twice.
  private readonly knownIds = new KnownEventIds((stream, fromRevision) => this.readStreamAs(stream, { fromRevision }, toRecordedEvent, true));
  private readonly maxAppendBytes: number;
  private readonly chains: ChainedAppends;
  private readonly organizations: OrganizationReads;

  private constructor(
    private readonly client: EventStoreDBClient,
    private readonly options: EventStoreDbOptions,
  ) {
    this.maxAppendBytes = options.maxAppendBytes ?? DEFAULT_MAX_APPEND_BYTES;
    this.chains = new ChainedAppends(this.chainIo(), { leaseMs: options.chainLeaseMs ?? DEFAULT_CHAIN_LEASE_MS, chainKey: options.chainKey });
    this.organizations = new OrganizationReads({
      readStream: (stream, fromRevision, maxCount) => this.readStreamAs(stream, { fromRevision, maxCount }, toAuditedEvent),
      readLast: async (stream) => (await this.readStream(stream, { direction: 'backwards', maxCount: 1 })).at(0),
      readAll: (after, maxCount) => this.readAllAs({ after, maxCount }, toAuditedDomainEvent),
      firstChainPosition: () => this.firstChainPosition(),
    });
  }

  /** The client connects lazily; `url` is a connection string such as esdb://host:2113?tls=false. */
  static async connect(url: string, options: EventStoreDbOptions = {}): Promise<EventStoreDbEventStore> {
    // The client's `esdb:connection` debug output prints the connection string it parses, password
    // included, and the TLS client key: it stays off whatever DEBUG says (the others may be on).
    clientDebug.connection.enabled = false;
    return EventStoreDbEventStore.over(EventStoreDBClient.connectionString(url), options);
  }

  /** Over a client made elsewhere (the unit tests give a stub of the server). */
  static over(client: EventStoreDBClient, options: EventStoreDbOptions = {}): EventStoreDbEventStore {
    return new EventStoreDbEventStore(client, options);
  }

  async append(stream: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    // The server recognises a retry only when it carries the original expected revision (or, for
    // `any`, from a bounded cache), and it indexes no event ids: so every id is checked here first
    // (for an organization's events, by the chain, in the organization's turn).
    // The size is checked first: an append this large was never stored, so it cannot be a retry either.
    this.checkSize(stream, events);
    if (organizationsOf(events).length > 0) return this.chains.append(stream, events, expectedRevision);
    // At a known revision (or none) the server itself answers a retry of these ids with the
    // original, or refuses an append that cannot be one: the ids are read only after a refusal.
    // For `any` and `stream_exists` it keeps no such rule, so they are read first.
    if (expectedRevision === 'any' || expectedRevision === 'stream_exists') {
      const earlier = await this.knownIds.earlierAppend(stream, events);
      if (earlier) return earlier;
    }
    try {
      const { recognisedRetry: _, ...result } = await this.write(stream, events, expectedRevision);
      return result;
    } catch (error) {
      if (!(error instanceof WrongExpectedVersion)) throw error;
      // The same ids may have landed (since the first look, for any): a retry of this append.
      const retried = await this.knownIds.earlierAppend(stream, events);
      if (retried) return retried;
      throw error;
    }
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    return this.readStreamAs(stream, options, toRecordedEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAllAs(options, toDomainEvent);
  }

  private async readStreamAs<T>(
    stream: string,
    options: ReadStreamOptions,
    convert: (event: NonNullable<ResolvedEvent['event']>, commitPosition?: bigint) => T,
    requiresLeader = false,
    retried = false,
  ): Promise<T[]> {
    if (options.maxCount === 0) return [];
    const backwards = options.direction === 'backwards';
    const read = this.client.readStream(stream, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision: options.fromRevision === undefined ? (backwards ? END : START) : BigInt(options.fromRevision),
      ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
      ...(requiresLeader ? { requiresLeader } : {}),
    });
    const found: T[] = [];
    try {
      for await (const resolved of read as AsyncIterable<ResolvedEvent>) {
        if (resolved.event) found.push(convert(resolved.event, resolved.commitPosition));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      // The client moves to the leader the answer names, but fails this read: it is asked once more, there.
      if (error instanceof NotLeaderError && requiresLeader && !retried) return this.readStreamAs(stream, options, convert, requiresLeader, true);
      throw error;
    }
    return found;
  }

  /**
   * `$all` as the port reads it. The server leaves out its own streams and the chain's, and counts
   * only what it sends; what a stream-name filter cannot leave out (system event types in other
   * streams, unresolved links) is dropped here, and as many are asked for again after it.
   */
  private async readAllAs<T extends RecordedEvent>(options: ReadAllOptions, convert: (resolved: AllStreamResolvedEvent) => T | undefined): Promise<T[]> {
    const direction = options.direction ?? 'forwards';
    const { maxCount = Number.POSITIVE_INFINITY } = options;
    let after = options.after;
    if (maxCount <= 0 || (direction === 'backwards' && after !== undefined && after <= 0)) return [];
    const found: T[] = [];
    for (;;) {
      const start = after;
      const beyondStart = (position: number) => start === undefined || (direction === 'forwards' ? position > start : position < start);
      // One more than wanted: a forwards read includes the event at its start, which the port's `after` excludes.
      const asked = Number.isFinite(maxCount) ? maxCount - found.length + 1 : undefined;
      const read = readAllFiltered(this.client, {
        streamRegex: DOMAIN_STREAMS,
        backwards: direction === 'backwards',
        fromPosition: readStart(start, direction),
        ...(asked === undefined ? {} : { maxCount: asked }),
      });
      let sent = 0;
      for await (const resolved of read as AsyncIterable<AllStreamResolvedEvent>) {
        sent += 1;
        if (resolved.commitPosition !== undefined) after = toPositionNumber({ commit: resolved.commitPosition, prepare: resolved.commitPosition });
        const event = convert(resolved);
        if (event && beyondStart(event.position)) found.push(event);
      }
      if (asked === undefined || sent < asked || found.length >= maxCount || after === start) return found.slice(0, maxCount);
    }
  }

  /** The organization's events, found through its chain stream (organization-reads.ts). */
  readOrganization(options: OrganizationReadOptions): Promise<AuditedEvent[]> {
    return this.organizations.read(options);
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllSubscription {
    const open = (after: number | undefined) => this.client.subscribeToAll({ fromPosition: readStart(after, 'forwards'), filter: domainStreamsFilter() });
    const subscription = new ResumingAllSubscription(
      open,
      options.after,
      () => this.subscriptions.delete(subscription),
      this.options.resume ?? DEFAULT_RESUME_POLICY,
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  chainEnd(organization: string): Promise<ChainEnd | null> {
    return this.chains.recordedEnd(organization);
  }

  subscriptionFault(): string | null {
    for (const subscription of this.subscriptions) if (subscription.fault !== null) return subscription.fault;
    return null;
  }

  async headPosition(): Promise<number> {
    const newest = (await this.readAll({ direction: 'backwards', maxCount: 1 })).at(0);
    return newest?.position ?? -1;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    await this.client.dispose();
  }

  private async firstChainPosition(): Promise<number | undefined> {
    // Read to its end (one event at most): a read left early keeps its call open.
    let first: number | undefined;
    for await (const resolved of readAllFiltered(this.client, { streamRegex: CHAIN_STREAMS, maxCount: 1 })) {
      if (resolved.event) first ??= toRecordedEvent(resolved.event, resolved.commitPosition).position;
    }
    return first;
  }

  private checkSize(stream: string, events: NewEvent[]): void {
    const bytes = appendSize(events);
    if (bytes > this.maxAppendBytes) throw new AppendTooLarge(stream, bytes, this.maxAppendBytes);
  }

  /**
   * One append as the server answers it, in the port's errors. Sent on a call of its own (the
   * client's unary Append), never on the client's shared BatchAppend call: that one keeps one
   * table of pending appends per process, so a single broken call failed every append in flight
   * on every connection, and a reply arriving after threw an uncaught TypeError; and its deadline
   * bounded only the server's receipt. On its own call, a failure is this append's alone, and the
   * deadline bounds the call on the client too (never the commit: a deadline passed is no proof
   * that nothing was stored).
   */
  private async write(stream: string, events: NewEvent[], expected: ExpectedRevision, deadlineMs?: number): Promise<WriteResult> {
    try {
      const result = await appendOnItsOwnCall.call(this.client, stream, events.map(toEventData), {
        expectedRevision: toEsdbExpected(expected),
        // Read by BatchAppend only.
        batchAppendSize: 0,
        ...(deadlineMs === undefined ? {} : { deadline: deadlineMs }),
      });
      // With `throwOnAppendFailure=false` in the connection string, the client answers a refusal instead of raising it,
      // and its BatchAppend path reports the revision as whether there is one (true as 1): the stream's own is read instead.
      if (!result.success) throw new WrongExpectedVersion(stream, expected, await this.lastRevision(stream));
      return await this.toAppendResult(stream, events, result);
    } catch (error) {
      if (error instanceof MaxAppendSizeExceededError) throw new AppendTooLarge(stream, appendSize(events), error.maxAppendSize);
      if (!(error instanceof WrongExpectedVersionError)) throw classifiedAppendError(stream, error);
      throw new WrongExpectedVersion(stream, expected, error.actualVersion === NO_STREAM ? -1 : Number(error.actualVersion));
    }
  }

  /** The stream's last revision as the leader has it, -1 when it does not exist. */
  private async lastRevision(stream: string): Promise<number> {
    return (await this.readStreamAs(stream, { direction: 'backwards', maxCount: 1 }, toRecordedEvent, true)).at(0)?.revision ?? -1;
  }

  private chainIo(): ChainIo {
    return {
      readLast: async (stream) => (await this.readStreamAs(stream, { direction: 'backwards', maxCount: 1 }, toRecordedEvent, true)).at(0),
      readAt: async (stream, revision) => (await this.readStreamAs(stream, { fromRevision: revision, maxCount: 1 }, toAuditedEvent, true)).at(0),
      write: (stream, events, expected, deadlineMs) => this.write(stream, events, expected, deadlineMs),
      earlierAppend: (stream, events) => this.knownIds.earlierAppend(stream, events),
      heldAnswer: (stream, events, revision) => this.knownIds.heldAnswer(stream, events, revision),
      lookUp: (stream, events) => this.knownIds.lookUp(stream, events),
      remember: (stream, firstRevision, events, lastPosition) => this.knownIds.remember(stream, firstRevision, events, lastPosition),
      checkSize: (stream, events) => this.checkSize(stream, events),
    };
  }

  private async toAppendResult(stream: string, events: NewEvent[], result: EsdbAppendResult): Promise<WriteResult> {
    // The server reports no position for an empty append or for a retry it recognised itself.
    if (events.length > 0 && result.position) {
      return { nextExpectedRevision: Number(result.nextExpectedRevision), position: toPositionNumber(result.position), recognisedRetry: false };
    }
    const last = (
      events.length > 0
        ? await this.readStream(stream, { fromRevision: Number(result.nextExpectedRevision), maxCount: 1 })
        : await this.readStream(stream, { direction: 'backwards', maxCount: 1 })
    ).at(0);
    return { nextExpectedRevision: last?.revision ?? -1, position: last?.position ?? -1, recognisedRetry: events.length > 0 };
  }
}
