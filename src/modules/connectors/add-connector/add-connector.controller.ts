import { Body, Controller } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../shared/caller';
import type { ConnectionView } from '../connection.projection';
import { AddConnector } from './add-connector.command';
import { AddConnectorDto } from './add-connector.dto';

@Controller()
export class AddConnectorController {
  constructor(private readonly commandBus: CommandBus) {}

  /** Stores a credential, sealed on arrival; the answer is the connection, never its values. */
  @Operation('connectors.add', 'connectors:write')
  add(@Body() body: AddConnectorDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<ConnectionView> {
    const { integrationId, authMethodId, name, values } = body;
    const command = new AddConnector(integrationId, authMethodId, name, values, body.isDefault ?? false, body.scope ?? 'organization', {
      caller,
      correlationId,
      now: new Date(),
    });
    return this.commandBus.execute(command);
  }
}
