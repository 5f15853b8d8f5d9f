import type { CommandContext } from '../../../shared/caller';

export class PromotePromptChannel {
  constructor(
    readonly promptId: string,
    readonly channel: string,
    readonly version: number,
    readonly context: CommandContext,
  ) {}
}
