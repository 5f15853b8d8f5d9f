import { HttpException, NotFoundException } from '@nestjs/common';
import { DomainError } from '#shared/errors';
import { AppendTooLarge, EventTooLarge } from '../event-store/event-store.port';
import { DecodeError } from './decode/decode.pipe';
import type { DecodeIssue } from './decode/decode-issues';
import { knownGetPaths, knownOperationPaths } from './operation.decorator';

/** An error body in the spec's shape. */
export interface ErrorBody {
  _tag: string;
  message: string;
  issues?: DecodeIssue[];
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  /** True when the error is the service's own fault and must be logged in full. */
  unexpected: boolean;
}

/** The one place where errors become HTTP answers. No stack trace or internal detail leaks. */
export function mapError(error: unknown, method: string, url: string): MappedError {
  if (error instanceof DomainError) return expected(error.status, error.tag, error.message);
  if (error instanceof DecodeError) {
    return { status: 400, body: { _tag: 'HttpApiDecodeError', message: error.message, issues: error.issues }, unexpected: false };
  }
  if (error instanceof AppendTooLarge) return appendTooLarge(error);
  if (error instanceof NotFoundException) return routeNotFound(method, url);
  if (error instanceof HttpException) return fromHttpException(error);
  const fastifyError = fromFastifyError(error);
  if (fastifyError) return fastifyError;
  return {
    status: 500,
    body: {
      _tag: 'InternalError',
      message: 'The service failed to handle this request. It has been logged; retry, and report the correlation id if it persists.',
    },
    unexpected: true,
  };
}

function expected(status: number, tag: string, message: string): MappedError {
  return { status, body: { _tag: tag, message }, unexpected: false };
}

/** A command whose events the event store cannot take in one append (EventStoreDB's MaxAppendSize). */
function appendTooLarge(error: AppendTooLarge): MappedError {
  if (error instanceof EventTooLarge) {
    return expected(
      400,
      'BadRequest',
      `This request would record a ${error.eventType} event of ${error.bytes} bytes, over the limit of ${error.limit} bytes per event. Send fewer cases or fewer, larger files.`,
    );
  }
  return expected(
    400,
    'BadRequest',
    `This request would record ${error.bytes} bytes in one write, and the event store takes at most ${error.limit} per write (EventStoreDB's MaxAppendSize). Send smaller sources or fewer cases, or raise MaxAppendSize on the server and ASSAY_EVENTSTORE_MAX_APPEND_BYTES to match.`,
  );
}

function routeNotFound(method: string, url: string): MappedError {
  const path = url.split('?')[0];
  if (knownOperationPaths().has(path) && method !== 'POST') {
    return expected(405, 'MethodNotAllowed', `Use POST for ${path}: every operation takes a JSON body by POST.`);
  }
  if (knownGetPaths().has(path) && method !== 'GET' && method !== 'HEAD') {
    return expected(405, 'MethodNotAllowed', `Use GET for ${path}.`);
  }
  return expected(404, 'NotFound', `There is no operation at ${path}. Operations are POST /v1/<area>.<resource>.<operation>.`);
}

function fromHttpException(error: HttpException): MappedError {
  const status = error.getStatus();
  if (status === 413) return payloadTooLarge();
  const tags: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 409: 'Conflict' };
  if (status < 500 && tags[status]) return expected(status, tags[status], error.message);
  if (status < 500) return expected(400, 'BadRequest', error.message);
  return { status: 500, body: { _tag: 'InternalError', message: 'The service failed to handle this request.' }, unexpected: true };
}

function payloadTooLarge(): MappedError {
  return expected(
    400,
    'BadRequest',
    'The request body is larger than this operation accepts (ASSAY_MAX_BODY_BYTES for evals.batches.start, at most 16 MiB for the others). Send a smaller body.',
  );
}

/** Errors raised by Fastify itself before a handler runs: body parsing and content types. */
function fromFastifyError(error: unknown): MappedError | null {
  if (!error || typeof error !== 'object' || !('code' in error)) return null;
  const code = String(error.code);
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return expected(400, 'BadRequest', 'Send the request body as JSON with the header Content-Type: application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return expected(400, 'BadRequest', 'The request body is empty; send a JSON object ({} when the operation takes no input).');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'ASSAY_MALFORMED_JSON':
      return expected(400, 'BadRequest', `The request body is not valid JSON: ${String((error as { message?: unknown }).message)}`);
    default:
      return otherFastifyRefusal(error, code);
  }
}

/** Any other refusal of Fastify's own (a malformed URL, FST_ERR_BAD_URL): a 400 in the spec's shape. */
function otherFastifyRefusal(error: object, code: string): MappedError | null {
  const status = (error as { statusCode?: unknown }).statusCode;
  if (!code.startsWith('FST_') || typeof status !== 'number' || status < 400 || status >= 500) return null;
  return expected(400, 'BadRequest', String((error as { message?: unknown }).message));
}
