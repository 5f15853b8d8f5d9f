import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import { actorOf, Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import type { ConnectionView } from '../connection.projection';
import { AddConnectorCommand, AddConnectorRequest } from './add-connector.command';
import { AddConnectorDto } from './add-connector.dto';

@Controller()
export class AddConnectorController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Stores a credential, sealed on arrival; the answer is the connection, never its values. */
  @Operation('connectors.add', 'connectors:write')
  add(@Body() body: AddConnectorDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<ConnectionView> {
    const now = this.clock.now();
    const { integrationId, authMethodId, name, values } = body;
    const add: AddConnectorRequest = {
      type: 'AddConnector',
      organization: caller.organization,
      integrationId,
      authMethodId,
      name,
      values,
      isDefault: body.isDefault ?? false,
      scope: body.scope ?? 'organization',
      owner: actorOf(caller),
      now,
    };
    return this.commandBus.execute(new AddConnectorCommand(add, { caller, correlationId, now }));
  }
}
