import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { requestMetadata } from '#shared/caller';
import { Forbidden } from '#shared/errors';
import { issueApiKey } from '../api-key-issuer';
import { CreateApiKeyCommand, CreatedApiKey } from './create-key.command';

@CommandHandler(CreateApiKeyCommand)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKeyCommand> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ payload, context }: CreateApiKeyCommand): Promise<CreatedApiKey> {
    const { organization, name, permissions, now } = payload;
    // A key may not grant more than its creator holds: keys:admin is no path to escalation.
    const beyond = permissions.filter((permission) => !context.caller.permissions.includes(permission));
    if (beyond.length > 0) {
      throw new Forbidden(`A key cannot grant permissions its creator does not hold: ${beyond.join(', ')}.`);
    }
    const issued = await issueApiKey(this.eventStore, { organization, name, permissions, now, metadata: requestMetadata(context) });
    return { id: issued.id, key: issued.key, name: issued.name, permissions: issued.permissions, createdAt: issued.createdAt };
  }
}
