import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { SetVariables } from '../environment.decider';
import type { VariableView } from '../environment.projection';

export interface VariableInput {
  name: string;
  value: string;
  /** Secret unless said otherwise. */
  secret: boolean;
}

/** The decider's SetVariables before the handler seals each value: plaintext only until then. */
export type SetVariablesRequest = Omit<SetVariables, 'variables'> & { variables: VariableInput[] };

/** environment.set: the variables to set, and the request it came from (for the audit metadata). */
export class SetVariablesCommand extends Command<VariableView[]> {
  constructor(
    readonly payload: SetVariablesRequest,
    readonly context: CommandContext,
  ) {
    super();
  }
}
