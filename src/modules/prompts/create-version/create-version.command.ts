import type { CommandContext } from '../../../shared/caller';

export class CreatePromptVersion {
  constructor(
    readonly promptId: string,
    readonly content: string,
    readonly name: string | undefined,
    readonly message: string | undefined,
    readonly publish: boolean,
    readonly context: CommandContext,
  ) {}
}
