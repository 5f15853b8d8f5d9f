import { Body, Controller, Inject, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import type { StartedBatch } from '../../batches/batch-starter';
import { readIdempotency, readTrigger } from '../../batches/request-context';
import { RunCaseCommand } from './run-case.command';
import { RunCaseDto } from './run-case.dto';

@Controller()
export class RunCaseController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Operation('evals.cases.run', 'evals:write')
  run(
    @Body() body: RunCaseDto,
    @Req() request: FastifyRequest,
    @CurrentCaller() caller: Caller,
    @CorrelationId() correlationId: string,
  ): Promise<StartedBatch> {
    const start = { checksIn: false, trigger: readTrigger(request), idempotency: readIdempotency(request, 'evals.cases.run', body) };
    const run = { caseId: body.id, trials: body.trials, variantIds: body.variants ?? null, start };
    return this.commandBus.execute(new RunCaseCommand(run, { caller, correlationId, now: this.clock.now() }));
  }
}
