import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { GetByIdDto } from '../../shared/get-by-id.dto';
import { BeatCommand, Beaten } from './beat.command';

@Controller()
export class BeatController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Says the runner is alive and extends every lease it holds on the batch, from now. */
  @Operation('runner.beat', 'evals:write')
  beat(@Body() body: GetByIdDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<Beaten> {
    return this.commandBus.execute(new BeatCommand(body.id, { caller, correlationId, now: this.clock.now() }));
  }
}
