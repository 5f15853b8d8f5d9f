import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { requestMetadata } from '#shared/caller';
import { connectorDecider } from '../connector.decider';
import { connectorStream } from '../connector.events';
import { RemoveConnectorCommand } from './remove-connector.command';

@CommandHandler(RemoveConnectorCommand)
export class RemoveConnectorHandler implements ICommandHandler<RemoveConnectorCommand> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ payload, context }: RemoveConnectorCommand): Promise<{ ok: true }> {
    const stream = connectorStream(payload.organization, payload.connectionId);
    await executeOnStream(this.eventStore, stream, connectorDecider, payload, requestMetadata(context));
    return { ok: true };
  }
}
