import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { RevokeApiKey } from '../api-key.decider';

/** auth.keys.revoke: the decider's command, and the request it came from (for the audit metadata). */
export class RevokeApiKeyCommand extends Command<{ ok: true }> {
  constructor(
    readonly payload: RevokeApiKey,
    readonly context: CommandContext,
  ) {
    super();
  }
}
