import { Body, Controller } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../shared/caller';
import { RemoveConnector } from './remove-connector.command';
import { RemoveConnectorDto } from './remove-connector.dto';

@Controller()
export class RemoveConnectorController {
  constructor(private readonly commandBus: CommandBus) {}

  /** Trials started from now on can no longer use the connection. */
  @Operation('connectors.remove', 'connectors:write')
  remove(@Body() body: RemoveConnectorDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    return this.commandBus.execute(new RemoveConnector(body.id, { caller, correlationId, now: new Date() }));
  }
}
