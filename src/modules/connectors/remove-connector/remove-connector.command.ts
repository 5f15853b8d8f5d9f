import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { RemoveConnector } from '../connector.decider';

/** connectors.remove: the decider's command, and the request it came from (for the audit metadata). */
export class RemoveConnectorCommand extends Command<{ ok: true }> {
  constructor(
    readonly payload: RemoveConnector,
    readonly context: CommandContext,
  ) {
    super();
  }
}
