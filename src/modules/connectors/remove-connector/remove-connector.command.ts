import type { CommandContext } from '../../../shared/caller';

export class RemoveConnector {
  constructor(
    readonly connectionId: string,
    readonly context: CommandContext,
  ) {}
}
