/**
 * Streams.Read of the EventStoreDB test server: stream reads, `$all` reads and catch-up
 * subscriptions to `$all`, filtered or not, as EventStoreDB's read enumerators answer them.
 */
import { randomUUID } from 'node:crypto';
import type { ServerWritableStream } from '@grpc/grpc-js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb';
import type { StoredEvent, TestLog } from './test-log';
import { readEvent, streamIdentifier, streamName } from './wire';

/** EventStoreDB's ReadBatchSize: a filtered subscription's search window when the client names none. */
const DEFAULT_MAX_SEARCH_WINDOW = 32;

type ReadCall = ServerWritableStream<ReadReq, ReadResp>;

function countOf(options: ReadReq.Options): number {
  const count = options.getCount();
  return count === '' ? Number.MAX_SAFE_INTEGER : Math.min(Number(count), Number.MAX_SAFE_INTEGER);
}

/**
 * The filter of a read or subscription, as the server's EventFilter builds it from the request
 * (`EventFilter.Get`): on the event type or the stream name; a regex is matched anywhere in it
 * (.NET `Regex.IsMatch`, whose lookaheads JavaScript reads alike), prefixes by `StartsWith`.
 * The server applies it before it sends anything: filtered-out events never cross the wire, and a
 * filtered read's count counts matching events only.
 */
function filterOf(options: ReadReq.Options): ((event: StoredEvent) => boolean) | null {
  const filter = options.getFilter();
  if (!options.hasFilter() || !filter) return null;
  const onType = filter.hasEventType();
  const expression = onType ? filter.getEventType() : filter.getStreamIdentifier();
  if (!expression) return null;
  const regex = expression.getRegex() === '' ? null : new RegExp(expression.getRegex());
  const prefixes = expression.getPrefixList();
  return (event) => {
    const subject = onType ? event.type : event.stream;
    return regex ? regex.test(subject) : prefixes.some((prefix) => subject.startsWith(prefix));
  };
}

/** The index of the first event strictly after `position` in `$all` (position order). */
function indexAfter(all: readonly StoredEvent[], position: bigint | null): number {
  if (position === null) return 0;
  let [low, high] = [0, all.length];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (all[middle].position <= position) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * A stream read: events from a revision (inclusive), forwards or backwards, up to the count. An
 * absent stream answers one StreamNotFound message, which the client raises as StreamNotFoundError.
 */
export function readStream(call: ReadCall, log: TestLog, options: ReadReq.Options): void {
  const stream = options.getStream();
  const name = streamName(stream?.getStreamIdentifier());
  const events = log.streams.get(name);
  if (!events) {
    call.write(new ReadResp().setStreamNotFound(new ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(name))));
    call.end();
    return;
  }
  const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
  const from = stream?.hasRevision() ? Number(stream.getRevision()) : stream?.hasEnd() ? Number.POSITIVE_INFINITY : backwards ? Number.POSITIVE_INFINITY : 0;
  const ordered = backwards ? events.filter((event) => event.revision <= from).reverse() : events.filter((event) => event.revision >= from);
  for (const event of ordered.slice(0, countOf(options))) call.write(readEvent(event));
  call.end();
}

/**
 * A `$all` read: forwards from a position inclusive (the first event at or after it), backwards
 * strictly before it; system events included, as the server sends them unless filtered.
 */
export function readAll(call: ReadCall, log: TestLog, options: ReadReq.Options, sent: (event: StoredEvent) => void = () => undefined): void {
  const all = options.getAll();
  const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
  const position = all?.hasPosition() ? BigInt(all.getPosition()?.getCommitPosition() ?? '0') : null;
  const atEnd = all?.hasEnd() ?? false;
  const matches = filterOf(options) ?? (() => true);
  let ordered: StoredEvent[];
  if (backwards) ordered = log.all.filter((event) => (position === null ? true : event.position < position)).reverse();
  else ordered = atEnd ? [] : log.all.filter((event) => position === null || event.position >= position);
  for (const event of ordered.filter(matches).slice(0, countOf(options))) {
    sent(event);
    call.write(readEvent(event));
  }
  call.end();
}

/**
 * A catch-up subscription to `$all`: a confirmation with the subscription's id, then every event
 * strictly after the start position (subscriptions exclude it, reads include it), then CaughtUp,
 * then live events as they commit, until the client cancels. A filtered subscription sends only
 * matching events, and a checkpoint each time it has examined checkpointIntervalMultiplier ×
 * maxSearchWindow events (32 by default, the server's ReadBatchSize), so that a client whose
 * filter matches nothing still learns how far the log was searched.
 */
export function subscribeToAll(call: ReadCall, log: TestLog, options: ReadReq.Options, sent: (event: StoredEvent) => void = () => undefined): void {
  const all = options.getAll();
  const filter = filterOf(options);
  const filterOptions = options.getFilter();
  const window = filterOptions?.hasMax() ? filterOptions.getMax() : DEFAULT_MAX_SEARCH_WINDOW;
  const interval = filter ? Math.max(1, (filterOptions?.getCheckpointintervalmultiplier() ?? 1) * window) : 0;
  let after: bigint | null = all?.hasPosition() ? BigInt(all.getPosition()?.getCommitPosition() ?? '0') : null;
  if (all?.hasEnd()) after = log.all.at(-1)?.position ?? null;
  const state = { cancelled: false };
  let scanned = 0;
  let wake: () => void = () => undefined;
  const stopListening = log.onCommit(() => wake());
  call.on('cancelled', () => {
    state.cancelled = true;
    stopListening();
    wake();
  });
  call.write(new ReadResp().setConfirmation(new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())));
  let cursor = indexAfter(log.all, after);
  const deliver = () => {
    // An administrator's removal shifts the log: find the place again by position.
    if (cursor > 0 && log.all[cursor - 1]?.position !== after) cursor = indexAfter(log.all, after);
    while (cursor < log.all.length) {
      const event = log.all[cursor++];
      after = event.position;
      scanned += 1;
      if (!filter || filter(event)) {
        sent(event);
        call.write(readEvent(event));
      }
      if (interval > 0 && scanned % interval === 0) {
        const checkpoint = new ReadResp.Checkpoint().setCommitPosition(String(event.position)).setPreparePosition(String(event.position));
        call.write(new ReadResp().setCheckpoint(checkpoint));
      }
    }
  };
  void (async () => {
    deliver();
    call.write(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()));
    for (;;) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      // Set by the 'cancelled' listener while this loop waited.
      if (state.cancelled) return;
      deliver();
    }
  })().catch((error: unknown) => call.emit('error', { code: GrpcStatus.INTERNAL, details: String(error) }));
}
