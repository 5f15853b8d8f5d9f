import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../../infrastructure/event-store/event-store.port';
import { executeOnStream } from '../../../infrastructure/event-store/stream-command';
import { actorOf, requestMetadata } from '../../../shared/caller';
import { connectorDecider } from '../connector.decider';
import { connectorStream } from '../connector.events';
import { RemoveConnector } from './remove-connector.command';

@CommandHandler(RemoveConnector)
export class RemoveConnectorHandler implements ICommandHandler<RemoveConnector, { ok: true }> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ connectionId, context }: RemoveConnector): Promise<{ ok: true }> {
    const { organization } = context.caller;
    const command = { type: 'RemoveConnector' as const, organization, connectionId, actor: actorOf(context.caller), now: context.now };
    await executeOnStream(this.eventStore, connectorStream(organization, connectionId), connectorDecider, command, requestMetadata(context));
    return { ok: true };
  }
}
