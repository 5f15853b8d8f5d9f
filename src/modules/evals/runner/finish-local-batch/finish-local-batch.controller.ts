import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { FinishedByRunner, FinishLocalBatchCommand } from './finish-local-batch.command';
import { FinishLocalBatchDto } from './finish-local-batch.dto';

@Controller()
export class FinishLocalBatchController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The runner is done (or was stopped: `cancelled`): its unreported trials become void and the batch ends. */
  @Operation('runner.batches.finish', 'evals:write')
  finish(@Body() body: FinishLocalBatchDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<FinishedByRunner> {
    return this.commandBus.execute(new FinishLocalBatchCommand(body.id, body.cancelled ?? false, { caller, correlationId, now: this.clock.now() }));
  }
}
