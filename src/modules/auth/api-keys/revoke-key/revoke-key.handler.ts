import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../../../infrastructure/event-store/event-store.port';
import { executeOnStream } from '../../../../infrastructure/event-store/stream-command';
import { requestMetadata } from '../../../../shared/caller';
import { apiKeyDecider } from '../api-key.decider';
import { apiKeyStream } from '../api-key.events';
import { RevokeApiKey } from './revoke-key.command';

@CommandHandler(RevokeApiKey)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKey, { ok: true }> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ keyId, context }: RevokeApiKey): Promise<{ ok: true }> {
    await executeOnStream(
      this.eventStore,
      apiKeyStream(keyId),
      apiKeyDecider,
      { type: 'RevokeApiKey', keyId, organization: context.caller.organization, now: context.now },
      requestMetadata(context),
    );
    return { ok: true };
  }
}
