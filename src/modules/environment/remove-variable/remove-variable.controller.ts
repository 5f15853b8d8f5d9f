import { Body, Controller } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../shared/caller';
import { RemoveVariable } from './remove-variable.command';
import { RemoveVariableDto } from './remove-variable.dto';

@Controller()
export class RemoveVariableController {
  constructor(private readonly commandBus: CommandBus) {}

  /** Trials started from now on no longer get the variable. */
  @Operation('environment.remove', 'environment:write')
  remove(@Body() body: RemoveVariableDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    return this.commandBus.execute(new RemoveVariable(body.name, { caller, correlationId, now: new Date() }));
  }
}
