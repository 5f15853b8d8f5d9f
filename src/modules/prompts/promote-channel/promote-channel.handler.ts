import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { requestMetadata } from '#shared/caller';
import { promptDecider } from '../prompt.decider';
import { promptStream } from '../prompt.events';
import { PromotePromptChannelCommand } from './promote-channel.command';

@CommandHandler(PromotePromptChannelCommand)
export class PromotePromptChannelHandler implements ICommandHandler<PromotePromptChannelCommand> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ payload, context }: PromotePromptChannelCommand): Promise<{ ok: true }> {
    await executeOnStream(this.eventStore, promptStream(payload.organization, payload.promptId), promptDecider, payload, requestMetadata(context));
    return { ok: true };
  }
}
