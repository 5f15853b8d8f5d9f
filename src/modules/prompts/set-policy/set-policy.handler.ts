import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { requestMetadata } from '#shared/caller';
import { promptPolicyDecider, promptPolicyStream } from '../prompt-policy';
import { SetPromptPolicyCommand } from './set-policy.command';

@CommandHandler(SetPromptPolicyCommand)
export class SetPromptPolicyHandler implements ICommandHandler<SetPromptPolicyCommand> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ payload, context }: SetPromptPolicyCommand): Promise<{ ok: true }> {
    await executeOnStream(this.eventStore, promptPolicyStream(payload.organization), promptPolicyDecider, payload, requestMetadata(context));
    return { ok: true };
  }
}
