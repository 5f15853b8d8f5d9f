import { Body, Controller, Inject, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { readIdempotency, readTrigger } from '../../shared/request-context';
import type { StartedBatch } from '../batch-starter';
import { StartBatchCommand } from './start-batch.command';
import { StartBatchDto } from '../start-batch.dto';
import { toPlan } from '../to-plan';

@Controller()
export class StartBatchController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Answers with the started batch before any trial runs; trials go on in the background. */
  @Operation('evals.batches.start', 'evals:write')
  start(
    @Body() body: StartBatchDto,
    @Req() request: FastifyRequest,
    @CurrentCaller() caller: Caller,
    @CorrelationId() correlationId: string,
  ): Promise<StartedBatch> {
    const start = {
      plan: toPlan(body),
      checksIn: body.checksIn ?? false,
      trigger: readTrigger(request),
      idempotency: readIdempotency(request, 'evals.batches.start', body),
    };
    return this.commandBus.execute(new StartBatchCommand(start, { caller, correlationId, now: this.clock.now() }));
  }
}
