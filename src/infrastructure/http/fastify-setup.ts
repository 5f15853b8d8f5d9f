import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { newId } from '#shared/ids';
import type { JsonLogger } from '../logging/json-logger';
import { limitBodiesPerOperation } from './body-limits';
import { drainBeforeClosing } from './drain';
import { requireHostHeader } from './protocol-errors';
import { recordServedRoutes } from './served-routes';
import type { AssayRequest } from './operation.decorator';

const CORRELATION_HEADER = 'x-correlation-id';
const CORRELATION_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

class MalformedJson extends Error {
  readonly code = 'ASSAY_MALFORMED_JSON';
  readonly statusCode = 400;
}

class UnsupportedContentType extends Error {
  readonly code = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';
  readonly statusCode = 400;
}

/**
 * What Nest does not decide: how bodies are parsed (JSON only, bounded per operation), the
 * correlation id of each request, the Host header HTTP/1.1 requires, reading the rest of a body
 * an early answer refused, and one structured log line per request. Errors raised before a
 * handler runs (body parsing) reach the global exception filter through Nest's own Fastify
 * error handler.
 */
export function configureFastify(fastify: FastifyInstance, logger: JsonLogger, maxBodyBytes: number): void {
  // Before any route exists: the API document lists exactly what was registered.
  recordServedRoutes(fastify);
  limitBodiesPerOperation(fastify, maxBodyBytes);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: maxBodyBytes }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') {
      done(null, {});
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(new MalformedJson((error as Error).message), undefined);
    }
  });
  fastify.addContentTypeParser('*', (request, _payload, done) => {
    done(new UnsupportedContentType(`Unsupported content type ${request.headers['content-type']}`), undefined);
  });

  // Callback hooks: an async hook costs every request a promise and a microtask turn.
  fastify.addHook('onRequest', (request: FastifyRequest & Partial<AssayRequest>, reply: FastifyReply, done) => {
    const given = request.headers[CORRELATION_HEADER];
    request.correlationId = typeof given === 'string' && CORRELATION_PATTERN.test(given) ? given : newId('req');
    request.startedAt = performance.now();
    void reply.header(CORRELATION_HEADER, request.correlationId);
    done();
  });

  requireHostHeader(fastify);
  drainBeforeClosing(fastify, maxBodyBytes);

  fastify.addHook('onResponse', (request: FastifyRequest & Partial<AssayRequest>, reply: FastifyReply, done) => {
    logger.info('request', {
      correlationId: request.correlationId,
      method: request.method,
      operation: operationOf(request.url),
      status: reply.statusCode,
      durationMs: Math.round((performance.now() - (request.startedAt ?? performance.now())) * 100) / 100,
      organization: request.caller?.organization,
    });
    done();
  });
}

/** The operation a request URL names (`/v1/evals.batches.get` → `evals.batches.get`), for logs. */
export function operationOf(url: string): string {
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  return path.startsWith('/v1/') ? path.slice(4) : path;
}
