import type { CommandContext } from '../../../shared/caller';
import type { ConnectionScope } from '../connector.events';

export class AddConnector {
  constructor(
    readonly integrationId: string,
    readonly authMethodId: string,
    readonly name: string,
    /** Plaintext only until the handler seals it. */
    readonly values: Record<string, string>,
    readonly isDefault: boolean,
    readonly scope: ConnectionScope,
    readonly context: CommandContext,
  ) {}
}
