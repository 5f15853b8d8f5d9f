import type { FastifyRequest } from 'fastify';
import { readIdempotency, readTrigger } from './request-context';
import type { StartRequest } from './batch-starter';
import type { StartBatchDto } from './start-batch.dto';
import { toPlan } from './to-plan';

/** A batch start as the body and headers of `operation` ask for it (evals.batches.start, runner.batches.start). */
export function startRequestOf(body: StartBatchDto, request: FastifyRequest, operation: string): Omit<StartRequest, 'context'> {
  return {
    plan: toPlan(body),
    checksIn: body.checksIn ?? false,
    trigger: readTrigger(request),
    idempotency: readIdempotency(request, operation, body),
  };
}
