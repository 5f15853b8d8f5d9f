import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import { actorOf, Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { RemoveConnectorCommand } from './remove-connector.command';
import { RemoveConnectorDto } from './remove-connector.dto';

@Controller()
export class RemoveConnectorController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Trials started from now on can no longer use the connection. */
  @Operation('connectors.remove', 'connectors:write')
  remove(@Body() body: RemoveConnectorDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    const now = this.clock.now();
    const remove = { type: 'RemoveConnector' as const, organization: caller.organization, connectionId: body.id, actor: actorOf(caller), now };
    return this.commandBus.execute(new RemoveConnectorCommand(remove, { caller, correlationId, now }));
  }
}
