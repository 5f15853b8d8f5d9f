import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../../../infrastructure/event-store/event-store.port';
import { requestMetadata } from '../../../../shared/caller';
import { Forbidden } from '../../../../shared/errors';
import { issueApiKey } from '../api-key-issuer';
import { CreateApiKey } from './create-key.command';

export interface CreatedApiKey {
  id: string;
  key: string;
  name: string;
  permissions: string[];
  createdAt: string;
}

@CommandHandler(CreateApiKey)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKey, CreatedApiKey> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ name, permissions, context }: CreateApiKey): Promise<CreatedApiKey> {
    // A key may not grant more than its creator holds: keys:admin is no path to escalation.
    const beyond = permissions.filter((permission) => !context.caller.permissions.includes(permission));
    if (beyond.length > 0) {
      throw new Forbidden(`A key cannot grant permissions its creator does not hold: ${beyond.join(', ')}.`);
    }
    const issued = await issueApiKey(this.eventStore, {
      organization: context.caller.organization,
      name,
      permissions,
      now: context.now,
      metadata: requestMetadata(context),
    });
    return { id: issued.id, key: issued.key, name: issued.name, permissions: issued.permissions, createdAt: issued.createdAt };
  }
}
