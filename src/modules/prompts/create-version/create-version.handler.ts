import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { requestMetadata } from '#shared/caller';
import { promptDecider } from '../prompt.decider';
import { promptStream, PromptVersionAppended } from '../prompt.events';
import { CreatedPromptVersion, CreatePromptVersionCommand } from './create-version.command';

@CommandHandler(CreatePromptVersionCommand)
export class CreatePromptVersionHandler implements ICommandHandler<CreatePromptVersionCommand> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ payload, context }: CreatePromptVersionCommand): Promise<CreatedPromptVersion> {
    const { organization, promptId } = payload;
    const { events } = await executeOnStream(this.eventStore, promptStream(organization, promptId), promptDecider, payload, requestMetadata(context));
    const appended = events.find((event): event is PromptVersionAppended => event.type === 'PromptVersionAppended');
    if (!appended) throw new Error(`Appending to prompt "${promptId}" decided no version.`);
    return { id: promptId, version: appended.data.version };
  }
}
