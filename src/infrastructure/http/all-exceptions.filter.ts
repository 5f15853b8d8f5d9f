import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '#shared/errors';
import type { JsonLogger } from '../logging/json-logger';
import { mapError } from './error-mapping';
import { operationOf } from './fastify-setup';
import type { AssayRequest } from './operation.decorator';

/** Every error that leaves a handler, a guard or a pipe goes through here. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly logger: JsonLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest & AssayRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    sendError(this.logger, exception, request, reply);
  }
}

export function sendError(logger: JsonLogger, exception: unknown, request: FastifyRequest & Partial<AssayRequest>, reply: FastifyReply): void {
  const mapped = mapError(exception, request.method, request.url);
  // Counted by the metrics (refusals by reason) when the request ends.
  if (exception instanceof DomainError && exception.reason !== null) request.refusal = exception.reason;
  if (abortedByClient(exception, request)) {
    // Nothing failed here and no one is left to answer; the reply still goes through Fastify
    // (into a closed socket), so the request's hooks finish as for any other answer.
    logger.info('request aborted by the client', { correlationId: request.correlationId, operation: operationOf(request.url) });
  } else if (mapped.unexpected) {
    const error = exception instanceof Error ? exception : new Error(String(exception));
    logger.error('unexpected error', {
      correlationId: request.correlationId,
      operation: operationOf(request.url),
      error: error.message,
      stack: error.stack,
    });
  }
  void reply.status(mapped.status).header('content-type', 'application/json; charset=utf-8').send(mapped.body);
}

/**
 * The client closed the connection before its request was read in full: Node fails the body
 * stream with ECONNRESET ("aborted"), which Fastify's body reader passes on as the request's
 * error. That is the client's choice, not a fault of the service.
 */
function abortedByClient(exception: unknown, request: FastifyRequest): boolean {
  const code = exception && typeof exception === 'object' ? (exception as { code?: unknown }).code : undefined;
  return code === 'ECONNRESET' && !request.raw.complete;
}
