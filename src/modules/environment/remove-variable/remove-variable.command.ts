import type { CommandContext } from '../../../shared/caller';

export class RemoveVariable {
  constructor(
    readonly name: string,
    readonly context: CommandContext,
  ) {}
}
