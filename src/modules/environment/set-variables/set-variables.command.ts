import type { CommandContext } from '../../../shared/caller';

export interface VariableInput {
  name: string;
  value: string;
  /** Secret unless said otherwise. */
  secret: boolean;
}

export class SetVariables {
  constructor(
    readonly variables: VariableInput[],
    readonly context: CommandContext,
  ) {}
}
