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
} from '#infrastructure/event-store/event-store.port';
import { EventTooLarge, MAX_EVENT_BYTES } from '#infrastructure/event-store/event-store.port';
import { eventBytes, withBlobsIn, withLargeObjectsOut, withLargeStringsOut } from './blob-references';
import type { BlobStore } from './blob-store.port';
import { BlobTextCache } from './blob-text-cache';

/**
 * An EventStore decorator that keeps large values out of the log: it moves them to the blob
 * store before appending (so the log never names a missing blob) and puts them back on every
 * read, so the domain, the saga and the projections keep the shapes they appended. An event
 * that still weighs more than MAX_EVENT_BYTES is refused with EventTooLarge.
 *
 * `readOrganization` is the audit trail: it answers events as stored, references included,
 * because the hash chain covers the stored form (a reference names its content's SHA-256, so
 * the chain still covers the content).
 */
export class BlobBackedEventStore implements EventStore {
  private readonly texts: BlobTextCache;
  /** Settles once the last append made was handed to the inner store (or refused before). */
  private handedOver: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly inner: EventStore,
    private readonly blobs: BlobStore,
  ) {
    this.texts = new BlobTextCache(blobs);
  }

  /** Appends reach the inner store in the order they were made (see `append`): its order is this store's. */
  get appendsInCallOrder(): boolean {
    return this.inner.appendsInCallOrder === true;
  }

  /**
   * Moves the events' large values out, then appends them. Appends are handed to the inner store
   * in the order they were made: one whose values go to the blob store first holds back those
   * made after it until it is handed over, so a small append never overtakes a large one (a
   * trial's outcome and the next trial's claim are stored in that order).
   */
  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const prepared = this.outOfLineAll(stream, events);
    const turn = this.handedOver.then(() => prepared);
    const appended = turn.then((stored) => this.inner.append(stream, stored, expected));
    this.handedOver = turn.catch(() => undefined);
    return appended;
  }

  private async outOfLineAll(stream: string, events: NewEvent[]): Promise<NewEvent[]> {
    const stored: NewEvent[] = [];
    for (const event of events) stored.push(await this.outOfLine(stream, event));
    return stored;
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.resolveAll(await this.inner.readStream(stream, options));
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.resolveAll(await this.inner.readAll(options));
  }

  readOrganization(options: OrganizationReadOptions): Promise<AuditedEvent[]> {
    return this.inner.readOrganization(options);
  }

  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription {
    const subscription = this.inner.subscribeToAll(options);
    const resolve = (event: RecordedEvent) => this.resolve(event);
    return {
      close: () => subscription.close(),
      async *[Symbol.asyncIterator]() {
        for await (const event of subscription) yield await resolve(event);
      },
    };
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

  async close(): Promise<void> {
    await this.inner.close();
    await this.blobs.close();
  }

  private async outOfLine(stream: string, event: NewEvent): Promise<NewEvent> {
    let data = await withLargeStringsOut(event.data, this.blobs);
    const candidate = { ...event, data };
    let bytes = eventBytes(candidate);
    if (bytes > MAX_EVENT_BYTES && typeof data === 'object' && data !== null) {
      // Moving objects out rewrites the data in place: never the caller's own (answered as it was when no string was large).
      if (data === event.data) candidate.data = data = structuredClone(data);
      bytes = await withLargeObjectsOut(data as Record<string, never>, bytes, this.blobs);
    }
    if (bytes > MAX_EVENT_BYTES) throw new EventTooLarge(stream, event.type, eventBytes(candidate));
    return candidate;
  }

  private async resolveAll(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    const resolved: RecordedEvent[] = [];
    for (const event of events) resolved.push(await this.resolve(event));
    return resolved;
  }

  private async resolve(event: RecordedEvent): Promise<RecordedEvent> {
    const data = await withBlobsIn(event.data, (sha256) => this.texts.text(sha256));
    return data === event.data ? event : { ...event, data };
  }
}
