import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
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

export function sendError(
  logger: JsonLogger,
  exception: unknown,
  request: FastifyRequest & Partial<AssayRequest>,
  reply: FastifyReply,
): void {
  const mapped = mapError(exception, request.method, request.url);
  if (mapped.unexpected) {
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
