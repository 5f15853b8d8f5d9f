import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { ConnectionView } from '../connection.projection';
import type { AddConnector } from '../connector.decider';

/**
 * The decider's AddConnector before the handler gives the connection its id and seals its
 * values: `values` is plaintext only until then.
 */
export type AddConnectorRequest = Omit<AddConnector, 'connectionId' | 'sealedValues'> & { values: Record<string, string> };

/** connectors.add: the connection to add, and the request it came from (for the audit metadata). */
export class AddConnectorCommand extends Command<ConnectionView> {
  constructor(
    readonly payload: AddConnectorRequest,
    readonly context: CommandContext,
  ) {
    super();
  }
}
