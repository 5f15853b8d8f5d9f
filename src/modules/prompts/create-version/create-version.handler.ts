import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../../infrastructure/event-store/event-store.port';
import { executeOnStream } from '../../../infrastructure/event-store/stream-command';
import { actorOf, requestMetadata } from '../../../shared/caller';
import { promptDecider } from '../prompt.decider';
import { promptStream, PromptVersionAppended } from '../prompt.events';
import { CreatePromptVersion } from './create-version.command';

export interface CreatedPromptVersion {
  id: string;
  version: number;
}

@CommandHandler(CreatePromptVersion)
export class CreatePromptVersionHandler implements ICommandHandler<CreatePromptVersion, CreatedPromptVersion> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ promptId, content, name, message, publish, context }: CreatePromptVersion): Promise<CreatedPromptVersion> {
    const { caller, now } = context;
    const { organization } = caller;
    const { events } = await executeOnStream(
      this.eventStore,
      promptStream(organization, promptId),
      promptDecider,
      { type: 'AppendPromptVersion', organization, promptId, content, name, message, publish, actor: caller.name, actorId: actorOf(caller), now },
      requestMetadata(context),
    );
    const appended = events.find((event): event is PromptVersionAppended => event.type === 'PromptVersionAppended');
    if (!appended) throw new Error(`Appending to prompt "${promptId}" decided no version.`);
    return { id: promptId, version: appended.data.version };
  }
}
