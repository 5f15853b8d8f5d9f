import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { requestMetadata } from '#shared/caller';
import { apiKeyDecider } from '../api-key.decider';
import { apiKeyStream } from '../api-key.events';
import { RevokeApiKeyCommand } from './revoke-key.command';

@CommandHandler(RevokeApiKeyCommand)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKeyCommand> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ payload, context }: RevokeApiKeyCommand): Promise<{ ok: true }> {
    await executeOnStream(this.eventStore, apiKeyStream(payload.keyId), apiKeyDecider, payload, requestMetadata(context));
    return { ok: true };
  }
}
