import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import type { Rescore } from './rescore-run.handler';
import { RescoreRunCommand } from './rescore-run.command';
import { RescoreRunDto } from './rescore-run.dto';

@Controller()
export class RescoreRunController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Judges a finished run's stored conversations again; the run itself is left as it was. */
  @Operation('evals.runs.rescore', 'evals:write')
  rescore(@Body() body: RescoreRunDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<Rescore> {
    const { name, prompt, model, choices, threshold, files } = body.validator;
    const validator = { kind: 'judge' as const, name, prompt, model, choices, threshold, files };
    return this.commandBus.execute(new RescoreRunCommand(body.id, validator, { caller, correlationId, now: this.clock.now() }));
  }
}
