import type { AppendResult, NewEvent, RecordedEvent } from '../event-store.port';
import { IdempotencyViolation } from '../event-store.port';

interface StoredEvent {
  revision: number;
  position: number;
}

interface StreamIds {
  readonly byId: Map<string, StoredEvent>;
  /** The last revision read into `byId`, -1 before the first. */
  through: number;
}

/** Reads a stream forwards from a revision (inclusive) to its end. */
export type ReadStreamTail = (stream: string, fromRevision: number) => Promise<RecordedEvent[]>;

/** About 100 bytes each: the ids of ~10 MB of recently appended-to streams. */
const DEFAULT_MAX_IDS = 100_000;

/**
 * Every event id of the streams this process appends to, so that a retried append is recognised
 * however many events came after it. EventStoreDB only recognises a retry sent with the original
 * expected revision, or for `any` from a bounded cache; it indexes no event ids. So the ids are
 * kept here: a stream is read whole the first time, and afterwards only its tail since the last
 * look (the events appended since, by this or another instance), which is one short read per
 * append. Streams are forgotten least recently used first beyond `maxIds` ids in all, and then
 * read whole again when next appended to: the answer stays exact, only slower.
 */
export class KnownEventIds {
  private readonly streams = new Map<string, StreamIds>();
  private held = 0;

  constructor(
    private readonly readTail: ReadStreamTail,
    private readonly maxIds = DEFAULT_MAX_IDS,
  ) {}

  /**
   * The original result when `events` were appended to `stream` before, checked against the
   * stream as it is now; undefined when the first id is not in it. The whole batch must follow
   * the first id consecutively, else IdempotencyViolation.
   */
  async earlierAppend(stream: string, events: readonly NewEvent[]): Promise<AppendResult | undefined> {
    if (events.length === 0) return undefined;
    const byId = await this.current(stream);
    const first = byId.get(events[0].id);
    if (!first) return undefined;
    let last = first;
    for (let index = 1; index < events.length; index++) {
      const stored = byId.get(events[index].id);
      if (stored?.revision !== first.revision + index) throw new IdempotencyViolation(stream);
      last = stored;
    }
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  /** How many ids are held now (for tests and diagnostics). */
  get size(): number {
    return this.held;
  }

  private async current(stream: string): Promise<Map<string, StoredEvent>> {
    for (;;) {
      const from = (this.streams.get(stream)?.through ?? -1) + 1;
      const tail = await this.readTail(stream, from);
      const entry = this.streams.get(stream) ?? { byId: new Map<string, StoredEvent>(), through: -1 };
      // Forgotten while the tail was read: what was read does not join up with what is held.
      if (from > entry.through + 1) continue;
      // Re-inserted below, so the map's order is least recently used first.
      this.streams.delete(stream);
      for (const event of tail) {
        if (event.revision <= entry.through) continue; // a concurrent look already read it
        // A stream written by other tools may repeat an id: the earliest occurrence is the original.
        if (!entry.byId.has(event.id)) {
          entry.byId.set(event.id, { revision: event.revision, position: event.position });
          this.held += 1;
        }
        entry.through = event.revision;
      }
      this.streams.set(stream, entry);
      this.evictBeyondLimit(stream);
      return entry.byId;
    }
  }

  private evictBeyondLimit(keep: string): void {
    for (const [stream, entry] of this.streams) {
      if (this.held <= this.maxIds) return;
      if (stream === keep) continue;
      this.streams.delete(stream);
      this.held -= entry.byId.size;
    }
    // Only the stream in use is left and it alone is over the limit: it is read whole next time.
    const alone = this.streams.get(keep);
    if (this.held > this.maxIds && alone) {
      this.streams.delete(keep);
      this.held -= alone.byId.size;
    }
  }
}
