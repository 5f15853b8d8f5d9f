import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { Leased, LeaseTrialsCommand } from './lease-trials.command';
import { LeaseTrialsDto } from './lease-trials.dto';

@Controller()
export class LeaseTrialsController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Queued trials of the runner's runs, each started and leased to the caller; none when none is queued. */
  @Operation('runner.trials.lease', 'evals:write')
  lease(@Body() body: LeaseTrialsDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<Leased> {
    return this.commandBus.execute(new LeaseTrialsCommand(body.id, body.max ?? 1, { caller, correlationId, now: this.clock.now() }));
  }
}
