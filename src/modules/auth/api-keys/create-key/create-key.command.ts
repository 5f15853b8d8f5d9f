import type { CommandContext } from '../../../../shared/caller';
import type { Permission } from '../../../../shared/permissions';

export class CreateApiKey {
  constructor(
    readonly name: string,
    readonly permissions: Permission[],
    readonly context: CommandContext,
  ) {}
}
