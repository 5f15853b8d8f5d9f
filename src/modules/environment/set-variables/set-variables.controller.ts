import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import type { VariableView } from '../environment.projection';
import { SetVariablesCommand } from './set-variables.command';
import { SetVariablesDto } from './set-variables.dto';

@Controller()
export class SetVariablesController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Sets (or replaces) variables; the values are sealed on arrival and never shown again. */
  @Operation('environment.set', 'environment:write')
  set(@Body() body: SetVariablesDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<VariableView[]> {
    const now = this.clock.now();
    const variables = body.variables.map(({ name, value, secret }) => ({ name, value, secret: secret ?? true }));
    const set = { type: 'SetVariables' as const, organization: caller.organization, variables, now };
    return this.commandBus.execute(new SetVariablesCommand(set, { caller, correlationId, now }));
  }
}
