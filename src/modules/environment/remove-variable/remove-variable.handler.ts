import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { requestMetadata } from '#shared/caller';
import { environmentDecider } from '../environment.decider';
import { environmentStream } from '../environment.events';
import { RemoveVariableCommand } from './remove-variable.command';

@CommandHandler(RemoveVariableCommand)
export class RemoveVariableHandler implements ICommandHandler<RemoveVariableCommand> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ payload, context }: RemoveVariableCommand): Promise<{ ok: true }> {
    await executeOnStream(this.eventStore, environmentStream(payload.organization), environmentDecider, payload, requestMetadata(context));
    return { ok: true };
  }
}
