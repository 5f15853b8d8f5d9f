import type { Duplex } from 'node:stream';
import { BadRequestException } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { ErrorBody } from './error-mapping';

type ClientError = Error & { code?: string; reason?: string };

/** Node's parser errors by code; everything else that breaks the framing is a 400 too. */
function answerFor(error: ClientError): { status: number; reason: string; body: ErrorBody } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', body: { _tag: 'RequestTimeout', message: 'The request did not arrive in full in time. Send it again.' } };
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const message = 'The request headers are larger than this server accepts (16 KiB in all). Send fewer or shorter headers.';
    return { status: 400, reason: 'Bad Request', body: { _tag: 'BadRequest', message } };
  }
  const detail = error.reason ?? error.message;
  return { status: 400, reason: 'Bad Request', body: { _tag: 'BadRequest', message: `The request is not well-formed HTTP/1.1: ${detail}.` } };
}

/**
 * Node's `clientError`: the request could not be parsed (bad framing, a bad header line,
 * oversized headers, a timeout), so there is no request or reply object, only the socket. The
 * answer is written to it in the spec's error shape, as Node's own default would write an
 * empty 400 and Fastify's its own `{statusCode, error, message}`. Nothing can be written when
 * the client is already gone, or when an answer to an earlier request on the socket has begun.
 */
export function answerClientError(error: ClientError, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const { status, reason, body } = answerFor(error);
    const text = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  }
  // What follows the error on the socket cannot be parsed: end it once the answer is out.
  socket.end();
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * HTTP/1.1 requires a Host header (RFC 9112 §3.2). Node refuses a request without one with an
 * empty 400 of its own; the server is created with that check off (`requireHostHeader: false`)
 * so that this hook refuses it instead, in the spec's shape.
 */
export function requireHostHeader(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    const { httpVersionMajor, httpVersionMinor } = request.raw;
    const needsHost = httpVersionMajor > 1 || (httpVersionMajor === 1 && httpVersionMinor >= 1);
    if (needsHost && !request.headers.host) {
      done(new BadRequestException('HTTP/1.1 requests need a Host header; send one.'));
      return;
    }
    done();
  });
}
