/**
 * Streams.BatchAppend and Streams.Append of the EventStoreDB test server, with the server's rules
 * for a request: its deadline, the append size limit, NotLeader, the write timeout, and the answer
 * to each commit decision of the log (test-log.ts).
 */
import type { sendUnaryData, ServerDuplexStream, ServerErrorResponse, ServerReadableStream } from '@grpc/grpc-js';
import { Empty as ProtobufEmpty } from 'google-protobuf/google/protobuf/empty_pb';
import { AllStreamPosition, Empty, UUID } from '@eventstore/db-client/generated/shared_pb';
import { AppendReq, AppendResp, BatchAppendReq, BatchAppendResp } from '@eventstore/db-client/generated/streams_pb';
import type { Status } from '@eventstore/db-client/generated/status_pb';
import { CommitDecision, Expected, ProposedEvent, sizeOnDisk } from './test-log';
import {
  accessDeniedError,
  accessDeniedStatus,
  bytesOf,
  maximumAppendSizeError,
  maximumAppendSizeStatus,
  notLeaderError,
  streamIdentifier,
  streamDeletedError,
  streamDeletedStatus,
  streamName,
  timeoutStatus,
  unavailableError,
  uuidString,
  wrongExpectedVersionStatus,
} from './wire';

/** What the append handlers need of the server (server.ts). */
export interface AppendHost {
  readonly maxAppendSize: number;
  readonly writeTimeoutMs: number;
  /** Runs the commit, with the test's hooks around it; a throw is the connection failing. */
  commit(stream: string, expected: Expected, events: ProposedEvent[]): Promise<CommitDecision>;
  /** Whether the stream's access control lets this writer append (the authorization provider's WriteOperation check). */
  mayWrite(stream: string): boolean;
  /** The deadline each BatchAppend request gave, in milliseconds from its arrival. */
  readonly deadlines: Array<{ stream: string; deadlineMs: number }>;
}

type Outcome = { decision: CommitDecision } | { timedOut: true };

/** Thrown by a commit on a node that is not the leader: answered as RpcExceptions.LeaderInfo. */
export class NotLeaderAnswer extends Error {
  constructor(readonly leader: { host: string; port: number }) {
    super('not the leader');
  }
}

function failure(error: unknown): ServerErrorResponse {
  if (error instanceof NotLeaderAnswer) return notLeaderError(error.leader);
  return unavailableError(error instanceof Error ? error.message : String(error));
}

/**
 * The write timeout: the request manager answers CommitTimeout (Status.Timeout) when the commit
 * is not acknowledged in time, yet the write goes on and may still commit afterwards: a timeout
 * never means "not stored".
 */
async function committed(host: AppendHost, stream: string, expected: Expected, events: ProposedEvent[]): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true }), host.writeTimeoutMs);
    // A commit a test holds forever must not hold the test process open.
    timer.unref();
  });
  try {
    return await Promise.race([host.commit(stream, expected, events).then((decision) => ({ decision })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function proposed(message: AppendReq.ProposedMessage | BatchAppendReq.ProposedMessage): ProposedEvent {
  const metadata = message.getMetadataMap();
  return {
    id: uuidString(message.getId()),
    type: metadata.get('type') ?? '',
    contentType: metadata.get('content-type') ?? 'application/octet-stream',
    data: bytesOf(message.getData()),
    metadata: bytesOf(message.getCustomMetadata()),
  };
}

function expectedOfBatch(options: BatchAppendReq.Options): Expected {
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  if (options.hasAny()) return { kind: 'any' };
  return { kind: 'revision', revision: Number(options.getStreamPosition()) };
}

function expectedOfAppend(options: AppendReq.Options): Expected {
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  if (options.hasAny()) return { kind: 'any' };
  return { kind: 'revision', revision: Number(options.getRevision()) };
}

interface PendingBatch {
  stream: string;
  expected: Expected;
  events: ProposedEvent[];
  size: number;
  timer: NodeJS.Timeout;
}

/**
 * Streams.BatchAppend: one long-lived call carrying many appends, each a correlation id with its
 * options (stream, expected revision, deadline) first, then its events, possibly over several
 * requests, the last one final. Modelled on BatchAppendWorker:
 * - a deadline already passed answers Status.Timeout at once; one that passes before the final
 *   request arrives drops the append and answers Status.Timeout; once the append is whole, the
 *   deadline no longer bounds it (only the write timeout does);
 * - an append over MaxAppendSize (Event.SizeOnDisk summed) answers MaximumAppendSizeExceeded;
 * - NotLeader fails the whole call (RpcExceptions.LeaderInfo thrown from the reply callback),
 *   so every append pending on it fails on the client;
 * - a commit answers Success with the revision and position, the ORIGINAL's for a retry.
 */
export function batchAppend(host: AppendHost, call: ServerDuplexStream<BatchAppendReq, BatchAppendResp>): void {
  const pending = new Map<string, PendingBatch>();
  let inFlight = 0;
  let ended = false;
  let failed = false;
  const reply = (correlation: UUID | undefined, stream: string, result: Status | BatchAppendResp.Success) => {
    if (failed) return;
    const response = new BatchAppendResp().setCorrelationId(correlation).setStreamIdentifier(streamIdentifier(stream));
    if (result instanceof BatchAppendResp.Success) response.setSuccess(result);
    else response.setError(result);
    call.write(response);
  };
  const fail = (error: ServerErrorResponse) => {
    if (failed) return;
    failed = true;
    for (const entry of pending.values()) clearTimeout(entry.timer);
    call.emit('error', error);
  };
  const settle = () => {
    if (ended && inFlight === 0 && !failed) call.end();
  };
  call.on('data', (request: BatchAppendReq) => {
    const correlation = request.getCorrelationId();
    const id = uuidString(correlation);
    const options = request.getOptions();
    if (options) {
      const stream = streamName(options.getStreamIdentifier());
      if (!host.mayWrite(stream)) {
        reply(correlation, stream, accessDeniedStatus());
        return;
      }
      const deadline = options.getDeadline()?.toDate().getTime() ?? Number.POSITIVE_INFINITY;
      const remaining = deadline - Date.now();
      host.deadlines.push({ stream, deadlineMs: remaining });
      const timeoutMs = Math.min(remaining, host.writeTimeoutMs);
      if (timeoutMs <= 0) {
        reply(correlation, stream, timeoutStatus());
        return;
      }
      const timer = setTimeout(() => {
        if (pending.delete(id)) reply(correlation, stream, timeoutStatus());
      }, timeoutMs);
      timer.unref();
      pending.set(id, { stream, expected: expectedOfBatch(options), events: [], size: 0, timer });
    }
    const entry = pending.get(id);
    if (!entry) return;
    for (const message of request.getProposedMessagesList()) {
      const event = proposed(message);
      entry.events.push(event);
      entry.size += sizeOnDisk(event);
    }
    if (entry.size > host.maxAppendSize) {
      pending.delete(id);
      clearTimeout(entry.timer);
      reply(correlation, entry.stream, maximumAppendSizeStatus(host.maxAppendSize));
      return;
    }
    if (!request.getIsFinal()) return;
    pending.delete(id);
    clearTimeout(entry.timer);
    inFlight += 1;
    committed(host, entry.stream, entry.expected, entry.events)
      .then((outcome) =>
        reply(correlation, entry.stream, 'timedOut' in outcome ? timeoutStatus() : batchResult(entry.stream, outcome.decision, entry.expected)),
      )
      .catch((error: unknown) => fail(failure(error)))
      .finally(() => {
        inFlight -= 1;
        settle();
      });
  });
  call.on('end', () => {
    ended = true;
    settle();
  });
}

function batchResult(stream: string, decision: CommitDecision, expected: Expected): Status | BatchAppendResp.Success {
  if (decision.kind === 'wrong_expected_version') return wrongExpectedVersionStatus(decision.current, expected);
  if (decision.kind === 'stream_deleted') return streamDeletedStatus(stream);
  const success = new BatchAppendResp.Success();
  if (decision.kind === 'empty') {
    if (decision.current < 0) success.setNoStream(new ProtobufEmpty());
    else success.setCurrentRevision(String(decision.current));
    return success.setNoPosition(new ProtobufEmpty());
  }
  const position = new AllStreamPosition().setCommitPosition(String(decision.position)).setPreparePosition(String(decision.position));
  return success.setCurrentRevision(String(decision.lastRevision)).setPosition(position);
}

/**
 * Streams.Append, the unary append: one call per append, options first, then one event per
 * request (the client uses it when the server does not list BatchAppend, and the adapter always).
 * A wrong expected revision is an answer (AppendResp.WrongExpectedVersion), not an error; access
 * denied is RpcExceptions.AccessDenied.
 */
export function append(host: AppendHost, call: ServerReadableStream<AppendReq, AppendResp>, callback: sendUnaryData<AppendResp>): void {
  let options: AppendReq.Options | undefined;
  const events: ProposedEvent[] = [];
  call.on('data', (request: AppendReq) => {
    if (request.hasOptions()) options = request.getOptions();
    const message = request.getProposedMessage();
    if (message) events.push(proposed(message));
  });
  call.on('end', () => {
    if (!options) {
      callback(unavailableError('an append without its options'));
      return;
    }
    const stream = streamName(options.getStreamIdentifier());
    const expected = expectedOfAppend(options);
    // The call's own deadline (grpc-timeout): gRPC ends the call on both sides once it passes.
    const deadline = call.getDeadline();
    host.deadlines.push({ stream, deadlineMs: (deadline instanceof Date ? deadline.getTime() : deadline) - Date.now() });
    if (!host.mayWrite(stream)) {
      callback(accessDeniedError());
      return;
    }
    if (events.reduce((total, event) => total + sizeOnDisk(event), 0) > host.maxAppendSize) {
      callback(maximumAppendSizeError(host.maxAppendSize));
      return;
    }
    committed(host, stream, expected, events)
      .then((outcome) => {
        if ('timedOut' in outcome) {
          callback(Object.assign(unavailableError('Operation timed out'), { code: 10 }));
          return;
        }
        if (outcome.decision.kind === 'stream_deleted') {
          callback(streamDeletedError(stream));
          return;
        }
        callback(null, appendResult(outcome.decision, expected));
      })
      .catch((error: unknown) => callback(failure(error)));
  });
}

function appendResult(decision: Exclude<CommitDecision, { kind: 'stream_deleted' }>, expected: Expected): AppendResp {
  if (decision.kind === 'wrong_expected_version') {
    const wrong = new AppendResp.WrongExpectedVersion();
    if (decision.current < 0) wrong.setCurrentNoStream(new Empty());
    else wrong.setCurrentRevision(String(decision.current));
    if (expected.kind === 'any') wrong.setExpectedAny(new Empty());
    else if (expected.kind === 'no_stream') wrong.setExpectedNoStream(new Empty());
    else if (expected.kind === 'stream_exists') wrong.setExpectedStreamExists(new Empty());
    else wrong.setExpectedRevision(String(expected.revision));
    return new AppendResp().setWrongExpectedVersion(wrong);
  }
  const success = new AppendResp.Success();
  if (decision.kind === 'empty') {
    if (decision.current < 0) success.setNoStream(new Empty());
    else success.setCurrentRevision(String(decision.current));
    return new AppendResp().setSuccess(success.setNoPosition(new Empty()));
  }
  const position = new AppendResp.Position().setCommitPosition(String(decision.position)).setPreparePosition(String(decision.position));
  return new AppendResp().setSuccess(success.setCurrentRevision(String(decision.lastRevision)).setPosition(position));
}
