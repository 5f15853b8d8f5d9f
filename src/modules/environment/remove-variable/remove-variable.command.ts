import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { RemoveVariable } from '../environment.decider';

/** environment.remove: the decider's command, and the request it came from (for the audit metadata). */
export class RemoveVariableCommand extends Command<{ ok: true }> {
  constructor(
    readonly payload: RemoveVariable,
    readonly context: CommandContext,
  ) {
    super();
  }
}
