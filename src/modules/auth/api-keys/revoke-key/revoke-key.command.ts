import type { CommandContext } from '../../../../shared/caller';

export class RevokeApiKey {
  constructor(
    readonly keyId: string,
    readonly context: CommandContext,
  ) {}
}
