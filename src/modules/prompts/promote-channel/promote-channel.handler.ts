import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../../infrastructure/event-store/event-store.port';
import { executeOnStream } from '../../../infrastructure/event-store/stream-command';
import { actorOf, requestMetadata } from '../../../shared/caller';
import { promptDecider } from '../prompt.decider';
import { promptStream } from '../prompt.events';
import { PromotePromptChannel } from './promote-channel.command';

@CommandHandler(PromotePromptChannel)
export class PromotePromptChannelHandler implements ICommandHandler<PromotePromptChannel, { ok: true }> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ promptId, channel, version, context }: PromotePromptChannel): Promise<{ ok: true }> {
    const { caller, now } = context;
    await executeOnStream(
      this.eventStore,
      promptStream(caller.organization, promptId),
      promptDecider,
      { type: 'PromotePromptChannel', organization: caller.organization, promptId, channel, version, actor: caller.name, actorId: actorOf(caller), now },
      requestMetadata(context),
    );
    return { ok: true };
  }
}
