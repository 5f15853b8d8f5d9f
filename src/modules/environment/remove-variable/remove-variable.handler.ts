import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../../infrastructure/event-store/event-store.port';
import { executeOnStream } from '../../../infrastructure/event-store/stream-command';
import { requestMetadata } from '../../../shared/caller';
import { environmentDecider } from '../environment.decider';
import { environmentStream } from '../environment.events';
import { RemoveVariable } from './remove-variable.command';

@CommandHandler(RemoveVariable)
export class RemoveVariableHandler implements ICommandHandler<RemoveVariable, { ok: true }> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ name, context }: RemoveVariable): Promise<{ ok: true }> {
    const organization = context.caller.organization;
    const command = { type: 'RemoveVariable' as const, organization, name, now: context.now };
    await executeOnStream(this.eventStore, environmentStream(organization), environmentDecider, command, requestMetadata(context));
    return { ok: true };
  }
}
