import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { RemoveVariableCommand } from './remove-variable.command';
import { RemoveVariableDto } from './remove-variable.dto';

@Controller()
export class RemoveVariableController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Trials started from now on no longer get the variable. */
  @Operation('environment.remove', 'environment:write')
  remove(@Body() body: RemoveVariableDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    const now = this.clock.now();
    const remove = { type: 'RemoveVariable' as const, organization: caller.organization, name: body.name, now };
    return this.commandBus.execute(new RemoveVariableCommand(remove, { caller, correlationId, now }));
  }
}
