import {
  ANY,
  AllStreamResolvedEvent,
  AllStreamSubscription,
  AppendExpectedRevision,
  AppendResult as EsdbAppendResult,
  BACKWARDS,
  END,
  EventData,
  EventStoreDBClient,
  FORWARDS,
  JSONType,
  NO_STREAM,
  Position,
  ReadPosition,
  ResolvedEvent,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
} from '@eventstore/db-client';
import {
  AllSubscription,
  AppendResult,
  EventMetadata,
  EventStore,
  ExpectedRevision,
  IdempotencyViolation,
  NewEvent,
  OrganizationReadOptions,
  AuditedEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
  WrongExpectedVersion,
  isSystemStream,
} from '../event-store.port';
import { matchesOrganizationRead, withChainFromMetadata } from '../organization-filter';

/*
 * Positions. EventStoreDB orders `$all` by a {commit, prepare} pair of byte offsets in its
 * transaction log. Events appended over gRPC are never part of an explicit (TCP-era) transaction,
 * so each one is committed by its own record and its commit and prepare positions are equal
 * (servers from 20.6.1 report it so). The port's single number is therefore the commit position:
 * strictly increasing in `$all` order, and a byte offset, so it stays below 2^53 (8 PiB).
 * An `after` turns back into {commit: after, prepare: after}, a real record boundary as long as
 * it came from this adapter. The server's `fromPosition` is inclusive for reads and exclusive for
 * subscriptions; both are filtered again here by number, so either reading gives the port's rule.
 */

/** How far back a re-append of the same ids is recognised when the server would not catch it. */
const IDEMPOTENCY_WINDOW = 200;
const ORGANIZATION_READ_PAGE = 500;

type StoredEsdbEvent = NonNullable<ResolvedEvent['event']> | NonNullable<AllStreamResolvedEvent['event']>;

function toPositionNumber(position: Position): number {
  const value = Number(position.commit);
  if (!Number.isSafeInteger(value)) throw new Error(`EventStoreDB position ${position.commit} exceeds 2^53.`);
  return value;
}

function toEsdbPosition(position: number | bigint): Position {
  return { commit: BigInt(position), prepare: BigInt(position) };
}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return STREAM_EXISTS;
  return BigInt(expected);
}

function toEventData(event: NewEvent): EventData {
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

function isSystemEvent(event: StoredEsdbEvent): boolean {
  return isSystemStream(event.streamId) || event.type.startsWith('$');
}

function toRecordedEvent(event: StoredEsdbEvent, commitPosition?: bigint): RecordedEvent {
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
function toDomainEvent(resolved: AllStreamResolvedEvent): RecordedEvent | undefined {
  if (!resolved.event || isSystemEvent(resolved.event)) return undefined;
  return toRecordedEvent(resolved.event, resolved.commitPosition);
}

function readStart(after: number | undefined, direction: 'forwards' | 'backwards'): ReadPosition {
  if (after === undefined) return direction === 'forwards' ? START : END;
  return after < 0 ? START : toEsdbPosition(after);
}

/** The EventStoreDB adapter, for deployments that run a server instead of the embedded file. */
export class EventStoreDbEventStore implements EventStore {
  private readonly subscriptions = new Set<EventStoreDbAllSubscription>();

  private constructor(private readonly client: EventStoreDBClient) {}

  /** The client connects lazily; `url` is a connection string such as esdb://host:2113?tls=false. */
  static async connect(url: string): Promise<EventStoreDbEventStore> {
    return new EventStoreDbEventStore(EventStoreDBClient.connectionString(url));
  }

  async append(stream: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    // The server only recognises a retry relative to the expected revision (or, for `any`, from a
    // bounded cache): with a still-valid revision it would store the ids again. It also reports
    // no reliable position for a retry it recognised. So look for an earlier append first.
    const earlier = await this.findEarlierAppend(stream, events);
    if (earlier) return earlier;
    try {
      const result = await this.client.appendToStream(stream, events.map(toEventData), {
        expectedRevision: toEsdbExpected(expectedRevision),
      });
      return await this.toAppendResult(stream, events, result);
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      // The same ids may have landed since the first look: a concurrent retry of this append.
      const retried = await this.findEarlierAppend(stream, events);
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
    const source = this.client.subscribeToAll({
      fromPosition: readStart(options.after, 'forwards'),
      filter: excludeSystemEvents(),
    });
    const subscription = new EventStoreDbAllSubscription(source, options.after, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
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

  /**
   * A retried append: when the first id is among the stream's recent events, the whole batch must
   * follow it consecutively, and the original result is returned whatever revision is expected now.
   */
  private async findEarlierAppend(stream: string, events: NewEvent[]): Promise<AppendResult | undefined> {
    if (events.length === 0) return undefined;
    const recent = await this.readStream(stream, { direction: 'backwards', maxCount: IDEMPOTENCY_WINDOW });
    const first = recent.findLast((event) => event.id === events[0].id);
    if (!first) return undefined;
    const byRevision = new Map(recent.map((event) => [event.revision, event]));
    let last = first;
    for (let index = 1; index < events.length; index++) {
      const stored = byRevision.get(first.revision + index);
      if (stored?.id !== events[index].id) throw new IdempotencyViolation(stream);
      last = stored;
    }
    return { nextExpectedRevision: last.revision, position: last.position };
  }
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * Wraps the client's catch-up subscription: drops system events and anything at or before the
 * last delivered position, and ends a pending `next()` as soon as it is closed (cancelling the
 * gRPC call does not always end the client's stream).
 */
class EventStoreDbAllSubscription implements AllSubscription {
  private readonly events: AsyncIterator<AllStreamResolvedEvent>;
  private readonly closedSignal: Promise<IteratorReturnResult<undefined>>;
  private signalClosed: () => void = () => undefined;
  private closed = false;

  constructor(
    private readonly source: AllStreamSubscription,
    private lastDelivered: number | undefined,
    private readonly onClose: () => void,
  ) {
    this.events = source[Symbol.asyncIterator]();
    this.closedSignal = new Promise((resolve) => {
      this.signalClosed = () => resolve(DONE);
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    return {
      next: () => this.next(),
      return: async () => {
        await this.close();
        return DONE;
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.signalClosed();
    this.onClose();
    await this.source.unsubscribe();
    this.source.destroy();
  }

  private async next(): Promise<IteratorResult<RecordedEvent>> {
    while (!this.closed) {
      const pending = this.events.next();
      pending.catch(() => undefined); // once closed, nobody awaits it any more
      const received = await Promise.race([pending, this.closedSignal]);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may have run while this awaited
      if (this.closed || received.done) return DONE;
      const event = toDomainEvent(received.value);
      if (event && (this.lastDelivered === undefined || event.position > this.lastDelivered)) {
        this.lastDelivered = event.position;
        return { done: false, value: event };
      }
    }
    return DONE;
  }
}
