import { Body, Controller, Inject, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import type { StartedBatch } from '../../batches/batch-starter';
import { StartBatchDto } from '../../batches/start-batch.dto';
import { startRequestOf } from '../../batches/start-request';
import { StartLocalBatchCommand } from './start-local-batch.command';

@Controller()
export class StartLocalBatchController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The body of evals.batches.start, `local` variants allowed: the caller leases and runs their trials. */
  @Operation('runner.batches.start', 'evals:write')
  start(
    @Body() body: StartBatchDto,
    @Req() request: FastifyRequest,
    @CurrentCaller() caller: Caller,
    @CorrelationId() correlationId: string,
  ): Promise<StartedBatch> {
    const start = startRequestOf(body, request, 'runner.batches.start');
    return this.commandBus.execute(new StartLocalBatchCommand(start, { caller, correlationId, now: this.clock.now() }));
  }
}
