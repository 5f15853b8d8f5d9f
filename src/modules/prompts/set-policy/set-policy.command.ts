import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { SetPromptPolicy } from '../prompt-policy';

/** prompts.policies.set: the decider's command, and the request it came from. */
export class SetPromptPolicyCommand extends Command<{ ok: true }> {
  constructor(
    readonly payload: SetPromptPolicy,
    readonly context: CommandContext,
  ) {
    super();
  }
}
