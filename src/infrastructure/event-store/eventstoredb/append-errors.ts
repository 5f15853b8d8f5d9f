/**
 * What an EventStoreDB append's failure says about whether its events were stored, for whoever
 * must decide what to do next (the audit chain voids a claim at once, or leaves it to its lease).
 */
import { AccessDeniedError, NotLeaderError, StreamDeletedError, UnknownError } from '@eventstore/db-client';

/** The server answered the append and stored none of it, and never will: a deleted stream, a refused writer, a malformed or oversized event. */
export class AppendRefused extends Error {
  constructor(
    readonly stream: string,
    readonly reason: string,
  ) {
    super(`EventStoreDB refused the append to "${stream}": ${reason}.`);
    this.name = 'AppendRefused';
  }
}

/**
 * The node was not (or no longer) the leader. A write it refuses as such was never stored; but the
 * client fails every append pending on the same call with it, so one of those may have committed
 * before: the leader's log says which, and what it has not got never lands (an old leader's
 * uncommitted writes are truncated when it rejoins).
 */
export class LeaderLost extends Error {
  constructor(
    readonly stream: string,
    cause: Error,
  ) {
    super(`EventStoreDB answered the append to "${stream}" that it is not the leader (${cause.message}).`);
    this.name = 'LeaderLost';
  }
}

/**
 * The client's errors that are an answer from the server about this append. The client reads an
 * error detail it does not know (MaximumAppendEventSizeExceeded, BadRequest) as an UnknownError
 * "Could not recognize …": the server answered it, so it refused it. Anything else (a dropped
 * connection, a timeout) leaves the outcome unknown, and is returned as it is.
 */
export function classifiedAppendError(stream: string, error: unknown): unknown {
  if (error instanceof StreamDeletedError) return new AppendRefused(stream, 'the stream was deleted');
  if (error instanceof AccessDeniedError) return new AppendRefused(stream, 'access denied');
  if (error instanceof UnknownError && /^Could not recognize (MaximumAppendEventSizeExceeded|BadRequest)/.test(error.message)) {
    return new AppendRefused(stream, error.message.replace('Could not recognize ', ''));
  }
  if (error instanceof NotLeaderError) return new LeaderLost(stream, error);
  return error;
}
