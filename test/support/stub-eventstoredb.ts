/**
 * A stub of an EventStoreDB server behind @eventstore/db-client's EventStoreDBClient, as far as
 * the adapter uses it (appendToStream, readStream, readAll, dispose), with the server's rules:
 * an append is atomic and checked against its expected revision (WrongExpectedVersionError with
 * the actual revision), positions grow in `$all` order, reading an absent stream fails with
 * StreamNotFoundError, and the server stamps `created`. Every call yields to the event loop
 * first, so concurrent callers interleave as they would over the network.
 *
 * Hooks let a test stand in for a crash or a network failure around an append, `tamper` edits
 * a stored event in place, which only someone with the server's files could do, and `remove`
 * deletes a stream for good, as an administrator could.
 */
import type { AppendExpectedRevision, EventData, EventStoreDBClient, Position } from '@eventstore/db-client';
import { StreamNotFoundError, WrongExpectedVersionError } from '@eventstore/db-client';

export interface StubRecord {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  data: unknown;
  metadata: unknown;
  created: Date;
  position: Position;
  isJson: true;
  contentType: 'application/json';
}

/** Runs around each append; it may throw (the call fails) or never settle (the caller died). */
export type AppendHook = (stream: string, events: readonly EventData[]) => Promise<void>;

interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  fromRevision?: 'start' | 'end' | bigint;
  maxCount?: number | bigint;
}

interface ReadAllOptions {
  direction?: 'forwards' | 'backwards';
  fromPosition?: 'start' | 'end' | Position;
  maxCount?: number | bigint;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const copy = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null)) as unknown;
/** A read gets its own copy, as one decoded from the wire would be. */
const asRead = (record: StubRecord): StubRecord => ({ ...record, data: copy(record.data), metadata: copy(record.metadata) });

export class StubEventStoreDb {
  readonly streams = new Map<string, StubRecord[]>();
  readonly log: StubRecord[] = [];
  /** Streams of the appends refused for their expected revision, in order. */
  readonly refused: string[] = [];
  /** The deadline of each append that gave one, by stream. */
  readonly deadlines: Array<{ stream: string; deadline: number }> = [];
  before: AppendHook | undefined;
  /** The client's `throwOnAppendFailure` connection option: false answers a refusal as `{success: false}`. */
  throwOnAppendFailure = true;
  after: AppendHook | undefined;
  private nextPosition = 100n;
  private readonly appended = new Set<() => void>();

  /** The stub as the client type the adapter takes. */
  client(): EventStoreDBClient {
    return {
      appendToStream: (stream: string, events: EventData | EventData[], options: { expectedRevision?: AppendExpectedRevision; deadline?: number } = {}) =>
        this.append(stream, Array.isArray(events) ? events : [events], options),
      readStream: (stream: string, options: ReadStreamOptions = {}) => this.readStream(stream, options),
      readAll: (options: ReadAllOptions = {}) => this.readAll(options),
      subscribeToAll: (options: { fromPosition?: 'start' | 'end' | Position } = {}) => this.subscribeToAll(options),
      dispose: async () => undefined,
    } as unknown as EventStoreDBClient;
  }

  /** Changes a stored event as someone with the server's files could. */
  tamper(stream: string, revision: number, change: (record: StubRecord) => void): void {
    const record = this.streams.get(stream)?.[revision];
    if (!record) throw new Error(`No event ${stream}@${revision} to tamper with.`);
    change(record);
  }

  /** Deletes a stream and scavenges it, as an administrator could: its events are gone from every read. */
  remove(stream: string): void {
    const removed = new Set(this.streams.get(stream) ?? []);
    if (removed.size === 0) throw new Error(`No stream ${stream} to remove.`);
    this.streams.delete(stream);
    const kept = this.log.filter((record) => !removed.has(record));
    this.log.splice(0, this.log.length, ...kept);
  }

  private async append(stream: string, events: EventData[], options: { expectedRevision?: AppendExpectedRevision; deadline?: number }) {
    await tick();
    if (options.deadline !== undefined) this.deadlines.push({ stream, deadline: options.deadline });
    await this.before?.(stream, events);
    const records = this.streams.get(stream);
    const current = records ? BigInt(records.length - 1) : 'no_stream';
    const expected = options.expectedRevision ?? 'any';
    const holds =
      expected === 'any' ||
      (expected === 'no_stream' && current === 'no_stream') ||
      (expected === 'stream_exists' && current !== 'no_stream') ||
      (typeof expected === 'bigint' && current === expected);
    if (!holds) {
      this.refused.push(stream);
      if (!this.throwOnAppendFailure) return { success: false, nextExpectedRevision: current === 'no_stream' ? -1n : current, position: undefined };
      throw new WrongExpectedVersionError(undefined, { streamName: stream, expected, current });
    }
    const stored = records ?? [];
    this.streams.set(stream, stored);
    for (const event of events) {
      const position = this.nextPosition;
      this.nextPosition += 100n;
      const record: StubRecord = {
        streamId: stream,
        id: event.id,
        revision: BigInt(stored.length),
        type: event.type,
        data: copy(event.data),
        metadata: copy(event.metadata),
        created: new Date(),
        position: { commit: position, prepare: position },
        isJson: true,
        contentType: 'application/json',
      };
      stored.push(record);
      this.log.push(record);
    }
    for (const wake of [...this.appended]) wake();
    await this.after?.(stream, events);
    const last = stored[stored.length - 1];
    return { success: true, nextExpectedRevision: last.revision, position: last.position };
  }

  private readStream(stream: string, options: ReadStreamOptions): AsyncIterable<{ event: StubRecord; commitPosition: bigint }> {
    const streams = this.streams;
    return (async function* () {
      await tick();
      const records = streams.get(stream);
      if (!records) throw new StreamNotFoundError(undefined, stream);
      const backwards = options.direction === 'backwards';
      const from =
        options.fromRevision === undefined || options.fromRevision === 'start' || options.fromRevision === 'end' ? undefined : Number(options.fromRevision);
      const ordered = backwards
        ? records.filter((record) => from === undefined || Number(record.revision) <= from).reverse()
        : records.filter((record) => from === undefined || Number(record.revision) >= from);
      const limit = options.maxCount === undefined ? ordered.length : Number(options.maxCount);
      for (const record of ordered.slice(0, limit)) yield { event: asRead(record), commitPosition: record.position.commit };
    })();
  }

  private readAll(options: ReadAllOptions) {
    const log = this.log;
    const backwards = options.direction === 'backwards';
    const from = options.fromPosition;
    const beyond = (record: StubRecord) => {
      if (from === undefined || from === 'start' || from === 'end') return true;
      return backwards ? record.position.commit <= from.commit : record.position.commit >= from.commit;
    };
    const state = { cancelled: false };
    const events = (async function* () {
      await tick();
      const ordered = (backwards ? [...log].reverse() : [...log]).filter(beyond);
      for (const record of ordered) {
        if (state.cancelled) return;
        yield { event: asRead(record), commitPosition: record.position.commit };
      }
    })();
    return Object.assign(events, {
      cancel: async () => {
        state.cancelled = true;
      },
    });
  }

  /** A catch-up subscription: the log strictly after the position, then each append as it comes, until unsubscribed. */
  private subscribeToAll(options: { fromPosition?: 'start' | 'end' | Position }) {
    const log = this.log;
    const appended = this.appended;
    const from = options.fromPosition;
    let cursor = from === 'end' ? log.length : 0;
    let stopped = false;
    let stop: () => void = () => undefined;
    const unsubscribed = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const after = (record: StubRecord) => from === undefined || typeof from === 'string' || record.position.commit > from.commit;
    async function* events() {
      while (!stopped) {
        if (cursor < log.length) {
          const record = log[cursor++];
          if (after(record)) yield { event: asRead(record), commitPosition: record.position.commit };
          continue;
        }
        let wake: () => void = () => undefined;
        const next = new Promise<void>((resolve) => {
          wake = resolve;
        });
        appended.add(wake);
        await Promise.race([next, unsubscribed]);
        appended.delete(wake);
      }
    }
    return Object.assign(events(), {
      unsubscribe: async () => {
        stopped = true;
        stop();
      },
    });
  }
}
