import { Body, Controller, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import { CorrelationId, CurrentCaller, Operation } from '../../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../../shared/caller';
import type { StartedBatch } from '../../batches/batch-starter';
import { readIdempotency, readTrigger } from '../../shared/request-context';
import { RunCase } from './run-case.command';
import { RunCaseDto } from './run-case.dto';

@Controller()
export class RunCaseController {
  constructor(private readonly commandBus: CommandBus) {}

  @Operation('evals.cases.run', 'evals:write')
  run(@Body() body: RunCaseDto, @Req() request: FastifyRequest, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<StartedBatch> {
    return this.commandBus.execute(
      new RunCase(body.id, body.trials, body.variants ?? null, {
        checksIn: false,
        trigger: readTrigger(request),
        idempotency: readIdempotency(request, 'evals.cases.run', body),
        context: { caller, correlationId, now: new Date() },
      }),
    );
  }
}
