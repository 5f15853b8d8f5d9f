import type { AppendResult, NewEvent, RecordedEvent } from '../event-store.port';
import { IdempotencyViolation } from '../event-store.port';

interface StoredEvent {
  revision: number;
  /** Undefined for an event this process appended that was not the last of its append (the server reports the last one's). */
  position: number | undefined;
}

/** A match whose position is not held: only a read can answer it. */
const POSITION_UNKNOWN = Symbol('position unknown');

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
 * append. What this process appends itself is held as it is stored, so its next append at the
 * revision it knows needs no read at all (`heldAnswer`). Streams are forgotten least recently used first beyond `maxIds` ids in all, and then
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
    return (await this.lookUp(stream, events)).earlier;
  }

  /** earlierAppend, with the stream's last revision as that read found it (-1: no stream). */
  async lookUp(stream: string, events: readonly NewEvent[]): Promise<{ earlier: AppendResult | undefined; lastRevision: number }> {
    let entry = await this.current(stream);
    if (events.length === 0) return { earlier: undefined, lastRevision: entry.through };
    let found = this.match(stream, entry.byId, events);
    if (found === POSITION_UNKNOWN) {
      // A retry of part of this process's own append: the stream is read whole again, positions included.
      this.forget(stream);
      entry = await this.current(stream);
      found = this.match(stream, entry.byId, events);
    }
    return { earlier: found === POSITION_UNKNOWN ? undefined : found, lastRevision: entry.through };
  }

  /**
   * The same answer without a read, when the ids held cover the stream through `revision` (the
   * revision an append expects): the earlier append, or null when none of these ids is there.
   * Undefined when only a read can tell.
   */
  heldAnswer(stream: string, events: readonly NewEvent[], revision: number): AppendResult | null | undefined {
    const entry = this.streams.get(stream);
    if (events.length === 0 || !entry || entry.through < revision) return undefined;
    const found = this.match(stream, entry.byId, events);
    return found === POSITION_UNKNOWN ? undefined : (found ?? null);
  }

  /**
   * The events this process has just stored at `firstRevision` on, the last at `lastPosition`:
   * held when they continue what is held (or start the stream), so that its next append to the
   * stream at the revision it knows needs no read.
   */
  remember(stream: string, firstRevision: number, events: readonly NewEvent[], lastPosition: number): void {
    const entry = this.streams.get(stream) ?? (firstRevision === 0 ? { byId: new Map<string, StoredEvent>(), through: -1 } : undefined);
    if (!entry || entry.through !== firstRevision - 1 || events.length === 0) return;
    this.streams.delete(stream);
    events.forEach((event, index) => {
      if (entry.byId.has(event.id)) return;
      entry.byId.set(event.id, { revision: firstRevision + index, position: index === events.length - 1 ? lastPosition : undefined });
      this.held += 1;
    });
    entry.through = firstRevision + events.length - 1;
    this.streams.set(stream, entry);
    this.evictBeyondLimit(stream);
  }

  private match(stream: string, byId: Map<string, StoredEvent>, events: readonly NewEvent[]): AppendResult | undefined | typeof POSITION_UNKNOWN {
    const first = byId.get(events[0].id);
    if (!first) return undefined;
    let last = first;
    for (let index = 1; index < events.length; index++) {
      const stored = byId.get(events[index].id);
      if (stored?.revision !== first.revision + index) throw new IdempotencyViolation(stream);
      last = stored;
    }
    return last.position === undefined ? POSITION_UNKNOWN : { nextExpectedRevision: last.revision, position: last.position };
  }

  private forget(stream: string): void {
    const entry = this.streams.get(stream);
    if (!entry) return;
    this.streams.delete(stream);
    this.held -= entry.byId.size;
  }

  /** How many ids are held now (for tests and diagnostics). */
  get size(): number {
    return this.held;
  }

  private async current(stream: string): Promise<StreamIds> {
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
      return entry;
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
