import { Body, Controller } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../shared/caller';
import type { VariableView } from '../environment.projection';
import { SetVariables } from './set-variables.command';
import { SetVariablesDto } from './set-variables.dto';

@Controller()
export class SetVariablesController {
  constructor(private readonly commandBus: CommandBus) {}

  /** Sets (or replaces) variables; the values are sealed on arrival and never shown again. */
  @Operation('environment.set', 'environment:write')
  set(@Body() body: SetVariablesDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<VariableView[]> {
    const variables = body.variables.map(({ name, value, secret }) => ({ name, value, secret: secret ?? true }));
    return this.commandBus.execute(new SetVariables(variables, { caller, correlationId, now: new Date() }));
  }
}
