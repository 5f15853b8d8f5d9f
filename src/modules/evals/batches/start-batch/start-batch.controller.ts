import { Body, Controller, Inject, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import type { StartedBatch } from '../batch-starter';
import { StartBatchCommand } from './start-batch.command';
import { StartBatchDto } from '../start-batch.dto';
import { startRequestOf } from '../start-request';

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
    const start = startRequestOf(body, request, 'evals.batches.start');
    return this.commandBus.execute(new StartBatchCommand(start, { caller, correlationId, now: this.clock.now() }));
  }
}
