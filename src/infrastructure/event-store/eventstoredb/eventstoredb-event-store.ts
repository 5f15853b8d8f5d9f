import {
  AllStreamResolvedEvent,
  AppendResult as EsdbAppendResult,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  MaxAppendSizeExceededError,
  NO_STREAM,
  ResolvedEvent,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
} from '@eventstore/db-client';
import {
  AllSubscription,
  AppendResult,
  AppendTooLarge,
  EventStore,
  ExpectedRevision,
  NewEvent,
  OrganizationReadOptions,
  AuditedEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
  WrongExpectedVersion,
} from '../event-store.port';
import { matchesOrganizationRead, withChainFromMetadata } from '../organization-filter';
import { appendSize } from './append-size';
import { readStart, toDomainEvent, toEsdbExpected, toEventData, toPositionNumber, toRecordedEvent } from './eventstoredb-events';
import { KnownEventIds } from './known-event-ids';
import { DEFAULT_RESUME_POLICY, ResumePolicy, ResumingAllSubscription } from './resuming-subscription';

/** EventStoreDB's default MaxAppendSize: the most one append may carry. */
export const DEFAULT_MAX_APPEND_BYTES = 1024 * 1024;
const ORGANIZATION_READ_PAGE = 500;

export interface EventStoreDbOptions {
  /** The server's MaxAppendSize, when it was changed from 1 MiB. */
  maxAppendBytes?: number;
  /** How a dropped subscription is resumed, and who hears of the drop. */
  resume?: ResumePolicy;
}

/** The EventStoreDB adapter, for deployments that run a server instead of the embedded file. */
export class EventStoreDbEventStore implements EventStore {
  private readonly subscriptions = new Set<ResumingAllSubscription>();
  private readonly knownIds = new KnownEventIds((stream, fromRevision) => this.readStream(stream, { fromRevision }));
  private readonly maxAppendBytes: number;

  private constructor(
    private readonly client: EventStoreDBClient,
    private readonly options: EventStoreDbOptions,
  ) {
    this.maxAppendBytes = options.maxAppendBytes ?? DEFAULT_MAX_APPEND_BYTES;
  }

  /** The client connects lazily; `url` is a connection string such as esdb://host:2113?tls=false. */
  static async connect(url: string, options: EventStoreDbOptions = {}): Promise<EventStoreDbEventStore> {
    return new EventStoreDbEventStore(EventStoreDBClient.connectionString(url), options);
  }

  async append(stream: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    // The server recognises a retry only when it carries the original expected revision (or, for
    // `any`, from a bounded cache), and it indexes no event ids: so every id is checked here first.
    // Checked first: an append this large was never stored, so it cannot be a retry either.
    const bytes = appendSize(events);
    if (bytes > this.maxAppendBytes) throw new AppendTooLarge(stream, bytes, this.maxAppendBytes);
    const earlier = await this.knownIds.earlierAppend(stream, events);
    if (earlier) return earlier;
    try {
      const result = await this.client.appendToStream(stream, events.map(toEventData), {
        expectedRevision: toEsdbExpected(expectedRevision),
      });
      return await this.toAppendResult(stream, events, result);
    } catch (error) {
      if (error instanceof MaxAppendSizeExceededError) throw new AppendTooLarge(stream, bytes, error.maxAppendSize);
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      // The same ids may have landed since the first look: a concurrent retry of this append.
      const retried = await this.knownIds.earlierAppend(stream, events);
      if (retried) return retried;
      const actual = error.actualVersion === NO_STREAM ? -1 : Number(error.actualVersion);
      throw new WrongExpectedVersion(stream, expectedRevision, actual);
    }
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount === 0) return [];
    const backwards = options.direction === 'backwards';
    const read = this.client.readStream(stream, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision: options.fromRevision === undefined ? (backwards ? END : START) : BigInt(options.fromRevision),
      ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
    });
    const found: RecordedEvent[] = [];
    try {
      for await (const resolved of read as AsyncIterable<ResolvedEvent>) {
        if (resolved.event) found.push(toRecordedEvent(resolved.event, resolved.commitPosition));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return found;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction ?? 'forwards';
    const { after, maxCount = Number.POSITIVE_INFINITY } = options;
    if (maxCount <= 0 || (direction === 'backwards' && after !== undefined && after <= 0)) return [];
    const beyondStart =
      direction === 'forwards' ? (position: number) => after === undefined || position > after : (position: number) => after === undefined || position < after;
    // System events count against the server's maxCount, so the count is enforced here instead.
    const read = this.client.readAll({
      direction: direction === 'forwards' ? FORWARDS : BACKWARDS,
      fromPosition: readStart(after, direction),
    });
    const found: RecordedEvent[] = [];
    for await (const resolved of read as AsyncIterable<AllStreamResolvedEvent>) {
      const event = toDomainEvent(resolved);
      if (event && beyondStart(event.position)) found.push(event);
      if (found.length >= maxCount) {
        await read.cancel();
        break;
      }
    }
    return found;
  }

  /**
   * EventStoreDB indexes no metadata, so an organization's events are found by reading `$all`
   * forwards from the cursor, page by page, and keeping the organization's: bounded by the cursor,
   * not by the log's size, for each page the caller asks for. No chain is kept here yet (see
   * docs/decisions.md): every event reads with `chain: null`.
   */
  async readOrganization(options: OrganizationReadOptions): Promise<AuditedEvent[]> {
    const found: AuditedEvent[] = [];
    let after = options.after;
    while (found.length < options.maxCount) {
      const page = await this.readAll({ after, maxCount: ORGANIZATION_READ_PAGE });
      for (const event of page) {
        if (matchesOrganizationRead(event, options) && found.length < options.maxCount) found.push(withChainFromMetadata(event));
      }
      if (page.length < ORGANIZATION_READ_PAGE) break;
      after = page[page.length - 1].position;
    }
    return found;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllSubscription {
    const open = (after: number | undefined) => this.client.subscribeToAll({ fromPosition: readStart(after, 'forwards'), filter: excludeSystemEvents() });
    const subscription = new ResumingAllSubscription(
      open,
      options.after,
      () => this.subscriptions.delete(subscription),
      this.options.resume ?? DEFAULT_RESUME_POLICY,
    );
    this.subscriptions.add(subscription);
    return subscription;
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

  private async toAppendResult(stream: string, events: NewEvent[], result: EsdbAppendResult): Promise<AppendResult> {
    // The server reports no position for an empty append or for a retry it recognised itself.
    if (events.length > 0 && result.position) {
      return { nextExpectedRevision: Number(result.nextExpectedRevision), position: toPositionNumber(result.position) };
    }
    const last = (
      events.length > 0
        ? await this.readStream(stream, { fromRevision: Number(result.nextExpectedRevision), maxCount: 1 })
        : await this.readStream(stream, { direction: 'backwards', maxCount: 1 })
    ).at(0);
    return { nextExpectedRevision: last?.revision ?? -1, position: last?.position ?? -1 };
  }
}
