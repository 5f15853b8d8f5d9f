import type { CommandContext } from '#shared/caller';
import type { JudgeValidator } from '#shared/eval-definitions';

export class RescoreRunCommand {
  constructor(
    readonly runId: string,
    readonly validator: JudgeValidator,
    readonly context: CommandContext,
  ) {}
}
