import { Body, Controller, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import { CorrelationId, CurrentCaller, Operation } from '../../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../../shared/caller';
import { readIdempotency, readTrigger } from '../../shared/request-context';
import type { StartedBatch } from '../batch-starter';
import { StartBatch } from './start-batch.command';
import { StartBatchDto } from './start-batch.dto';
import { toPlan } from './to-plan';

@Controller()
export class StartBatchController {
  constructor(private readonly commandBus: CommandBus) {}

  /** Answers with the started batch before any trial runs; trials go on in the background. */
  @Operation('evals.batches.start', 'evals:write')
  start(
    @Body() body: StartBatchDto,
    @Req() request: FastifyRequest,
    @CurrentCaller() caller: Caller,
    @CorrelationId() correlationId: string,
  ): Promise<StartedBatch> {
    return this.commandBus.execute(
      new StartBatch({
        plan: toPlan(body),
        checksIn: body.checksIn ?? false,
        trigger: readTrigger(request),
        idempotency: readIdempotency(request, 'evals.batches.start', body),
        context: { caller, correlationId, now: new Date() },
      }),
    );
  }
}
