/**
 * The transaction log of the EventStoreDB test server (server.ts): streams, `$all` and the rules
 * by which EventStoreDB decides an append. Each rule names the server behaviour it models, as read
 * in the server's source (oss-v21.10 to KurrentDB 25), mainly `IndexWriter.CheckCommit` and the
 * request managers.
 */
import { randomUUID } from 'node:crypto';

export interface StoredEvent {
  stream: string;
  id: string;
  revision: number;
  type: string;
  contentType: string;
  data: Buffer;
  metadata: Buffer;
  /** Milliseconds since the epoch; sent as .NET ticks since the epoch, as the server does. */
  createdMs: number;
  /** Commit and prepare positions are equal: each event committed by its own record (gRPC appends are never explicit transactions). */
  position: bigint;
}

export interface ProposedEvent {
  id: string;
  type: string;
  contentType: string;
  data: Buffer;
  metadata: Buffer;
}

export type Expected = { kind: 'any' } | { kind: 'no_stream' } | { kind: 'stream_exists' } | { kind: 'revision'; revision: number };

export type CommitDecision =
  | { kind: 'written'; lastRevision: number; position: bigint }
  | { kind: 'idempotent'; lastRevision: number; position: bigint }
  | { kind: 'empty'; current: number }
  | { kind: 'wrong_expected_version'; current: number }
  | { kind: 'stream_deleted' };

/** Roughly what a prepare record adds around an event's own bytes: positions are byte offsets, not counters. */
const RECORD_OVERHEAD_BYTES = 80;
/** The server's default MaxAppendSize (1 MiB). */
export const DEFAULT_MAX_APPEND_SIZE = 1024 * 1024;

/**
 * The size the server counts against MaxAppendSize: EventStoreDB's `Event.SizeOnDisk` is the data
 * and metadata bytes plus the type's UTF-16 length twice (its .NET string as stored).
 */
export function sizeOnDisk(event: ProposedEvent): number {
  return event.data.length + event.metadata.length + event.type.length * 2;
}

export class TestLog {
  readonly streams = new Map<string, StoredEvent[]>();
  /** Streams deleted for good (tombstoned): no append to them is ever taken again. */
  readonly tombstoned = new Set<string>();
  readonly all: StoredEvent[] = [];
  private nextPosition = 0n;
  private readonly woken = new Set<() => void>();
  /**
   * `_committedEvents` in IndexWriter: a bounded cache of recently committed event ids, which is
   * all the server consults to recognise a retry sent with `any` or `stream_exists`.
   */
  private readonly committedIds = new Map<string, { stream: string; revision: number }>();

  constructor(private readonly committedIdsCapacity = 100_000) {
    // A fresh database starts with the server's own events ($-prefixed streams and types) in $all.
    this.commitSystem('$settings', '$settings');
    this.commitSystem('$scavenges', '$scavengeIndexInitialized');
  }

  /**
   * Decides an append as IndexWriter.CheckCommit does, and commits it when it is new:
   * - expected `any` or `stream_exists`: the append is a retry when its first id is in the
   *   committed-ids cache for this stream; then every id must be (else CorruptedIdempotency,
   *   answered as WrongExpectedVersion), and the answer is the ORIGINAL's last revision and
   *   position (StorageMessage.AlreadyCommitted → WriteEventsCompleted Success). Ids the cache
   *   evicted are not recognised: the events are written again.
   * - expected `no_stream` or a revision below the current one: a retry when the events at the
   *   revisions after the expected one carry the same ids, in order; the first differing is
   *   WrongExpectedVersion, a later one CorruptedIdempotency (WrongExpectedVersion too).
   * - an expected revision above the current one, `stream_exists` on an absent stream:
   *   WrongExpectedVersion with the current revision.
   * - the expected revision equal to the current one: written, whatever the ids (no id check).
   */
  commit(stream: string, expected: Expected, events: readonly ProposedEvent[]): CommitDecision {
    // CheckCommit: a stream whose last event number is DeletedStream refuses every append (CommitDecision.Deleted).
    if (this.tombstoned.has(stream)) return { kind: 'stream_deleted' };
    const stored = this.streams.get(stream) ?? [];
    const current = stored.length - 1;
    if (expected.kind === 'stream_exists' && current < 0) return { kind: 'wrong_expected_version', current };
    if (expected.kind === 'any' || expected.kind === 'stream_exists') {
      const retried = this.retriedByCache(stream, events, current);
      if (retried) return retried;
      return this.write(stream, stored, events);
    }
    const expectedRevision = expected.kind === 'no_stream' ? -1 : expected.revision;
    if (expectedRevision < current) return this.retriedAtRevision(stored, expectedRevision, events, current);
    if (expectedRevision > current) return { kind: 'wrong_expected_version', current };
    return this.write(stream, stored, events);
  }

  /** Waits until something is committed (for live subscriptions); resolves at once when `stop` is called. */
  onCommit(listener: () => void): () => void {
    this.woken.add(listener);
    return () => this.woken.delete(listener);
  }

  /** Changes a stored event in place, as someone with the server's files could. */
  tamper(stream: string, revision: number, change: (event: StoredEvent) => void): void {
    const event = this.streams.get(stream)?.[revision];
    if (!event) throw new Error(`No event ${stream}@${revision} to tamper with.`);
    change(event);
  }

  /** Deletes a stream and scavenges it, as an administrator could: its events are gone from every read. */
  remove(stream: string): void {
    const removed = new Set(this.streams.get(stream) ?? []);
    if (removed.size === 0) throw new Error(`No stream ${stream} to remove.`);
    this.streams.delete(stream);
    const kept = this.all.filter((event) => !removed.has(event));
    this.all.splice(0, this.all.length, ...kept);
    for (const event of removed) this.committedIds.delete(event.id);
  }

  /** Deletes a stream for good, as `$tombstone` does: its events stay readable until scavenged, appends are refused. */
  tombstone(stream: string): void {
    this.tombstoned.add(stream);
  }

  private retriedByCache(stream: string, events: readonly ProposedEvent[], current: number): CommitDecision | null {
    if (events.length === 0) return null;
    const found = events.map((event) => this.committedIds.get(event.id));
    if (found[0]?.stream !== stream) return null;
    if (found.some((entry) => entry?.stream !== stream)) return { kind: 'wrong_expected_version', current };
    const last = found[found.length - 1] as { revision: number };
    const original = (this.streams.get(stream) ?? [])[last.revision];
    return { kind: 'idempotent', lastRevision: last.revision, position: original.position };
  }

  private retriedAtRevision(stored: StoredEvent[], expectedRevision: number, events: readonly ProposedEvent[], current: number): CommitDecision {
    if (events.length === 0) return { kind: 'wrong_expected_version', current };
    for (const [index, event] of events.entries()) {
      if (stored[expectedRevision + 1 + index]?.id !== event.id) return { kind: 'wrong_expected_version', current };
    }
    const last = stored[expectedRevision + events.length];
    return { kind: 'idempotent', lastRevision: last.revision, position: last.position };
  }

  private write(stream: string, stored: StoredEvent[], events: readonly ProposedEvent[]): CommitDecision {
    if (events.length === 0) return { kind: 'empty', current: stored.length - 1 };
    this.streams.set(stream, stored);
    let last: StoredEvent | undefined;
    for (const event of events) last = this.append(stream, stored, event);
    for (const wake of [...this.woken]) wake();
    const written = last as StoredEvent;
    return { kind: 'written', lastRevision: written.revision, position: written.position };
  }

  private append(stream: string, stored: StoredEvent[], event: ProposedEvent): StoredEvent {
    const record: StoredEvent = { ...event, stream, revision: stored.length, createdMs: Date.now(), position: this.nextPosition };
    this.nextPosition += BigInt(RECORD_OVERHEAD_BYTES + stream.length + sizeOnDisk(event));
    stored.push(record);
    this.all.push(record);
    this.committedIds.set(event.id, { stream, revision: record.revision });
    if (this.committedIds.size > this.committedIdsCapacity) {
      const oldest = this.committedIds.keys().next().value as string;
      this.committedIds.delete(oldest);
    }
    return record;
  }

  private commitSystem(stream: string, type: string): void {
    const stored = this.streams.get(stream) ?? [];
    this.streams.set(stream, stored);
    this.append(stream, stored, { id: randomUUID(), type, contentType: 'application/json', data: Buffer.from('{}'), metadata: Buffer.alloc(0) });
  }
}
