import type {
  AllSubscription,
  AppendResult,
  AuditedEvent,
  ChainEnd,
  EventStore,
  ExpectedRevision,
  NewEvent,
  OrganizationReadOptions,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
} from '../event-store/event-store.port';

/** The requests in flight under one correlation id and the last position they appended. */
interface OpenCorrelation {
  requests: number;
  lastPosition: number;
}

/**
 * Read-your-writes without wrapping each handler: every event a request appends carries the
 * request's correlation id, so the position of each append is noted under that id while the
 * request is in flight, and the HTTP layer holds the answer until the read models reach it.
 * Appends under ids that no request has open (the saga, the CLI, bootstrap) are not noted, so
 * nothing accumulates. Two requests that send the same correlation id share one entry, and each
 * waits for the later of their writes, which is never too early.
 */
export class WriteTracker {
  private readonly open = new Map<string, OpenCorrelation>();

  /** A request under this correlation id has started. */
  begin(correlationId: string): void {
    const entry = this.open.get(correlationId);
    if (entry) entry.requests += 1;
    else this.open.set(correlationId, { requests: 1, lastPosition: -1 });
  }

  noteAppend(correlationId: string, position: number): void {
    const entry = this.open.get(correlationId);
    if (entry && position > entry.lastPosition) entry.lastPosition = position;
  }

  /** A request has ended: the last position appended under its correlation id, or -1 for none. */
  end(correlationId: string): number {
    const entry = this.open.get(correlationId);
    if (!entry) return -1;
    entry.requests -= 1;
    if (entry.requests === 0) this.open.delete(correlationId);
    return entry.lastPosition;
  }

  /** How many correlation ids have a request in flight (zero when the server is idle). */
  get openCorrelations(): number {
    return this.open.size;
  }
}

/** An EventStore decorator that tells the write tracker the position of every append. */
export class PositionTrackingEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly writes: WriteTracker,
  ) {}

  /** Each append goes to the inner store as it is called: its order is the inner store's. */
  get appendsInCallOrder(): boolean {
    return this.inner.appendsInCallOrder === true;
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const result = await this.inner.append(stream, events, expected);
    for (const event of events) this.writes.noteAppend(event.metadata.correlationId, result.position);
    return result;
  }

  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, options);
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  readOrganization(options: OrganizationReadOptions): Promise<AuditedEvent[]> {
    return this.inner.readOrganization(options);
  }

  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  subscriptionFault(): string | null {
    return this.inner.subscriptionFault?.() ?? null;
  }

  chainEnd(organization: string): Promise<ChainEnd | null> {
    return this.inner.chainEnd?.(organization) ?? Promise.resolve(null);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
