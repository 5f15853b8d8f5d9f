import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { IssueApiKey } from '../api-key.decider';

export interface CreatedApiKey {
  id: string;
  key: string;
  name: string;
  permissions: string[];
  createdAt: string;
}

/** The decider's IssueApiKey before the handler draws the key: its id and hash come from it. */
export type IssueApiKeyRequest = Omit<IssueApiKey, 'keyId' | 'keyHash'>;

/** auth.keys.create: the key to issue, and the request it came from (its caller bounds the permissions). */
export class CreateApiKeyCommand extends Command<CreatedApiKey> {
  constructor(
    readonly payload: IssueApiKeyRequest,
    readonly context: CommandContext,
  ) {
    super();
  }
}
