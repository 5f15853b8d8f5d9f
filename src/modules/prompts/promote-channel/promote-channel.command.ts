import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { PromotePromptChannel } from '../prompt.decider';

/** prompts.promote: the decider's command, and the request it came from (for the audit metadata). */
export class PromotePromptChannelCommand extends Command<{ ok: true }> {
  constructor(
    readonly payload: PromotePromptChannel,
    readonly context: CommandContext,
    /** The batch named as evidence, checked against the channel's policy before the decision. */
    readonly evidence: { batchId: string } | null = null,
  ) {
    super();
  }
}
