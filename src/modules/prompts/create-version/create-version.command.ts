import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { AppendPromptVersion } from '../prompt.decider';

export interface CreatedPromptVersion {
  id: string;
  version: number;
}

/** prompts.versions.create: the decider's command, and the request it came from (for the audit metadata). */
export class CreatePromptVersionCommand extends Command<CreatedPromptVersion> {
  constructor(
    readonly payload: AppendPromptVersion,
    readonly context: CommandContext,
  ) {
    super();
  }
}
