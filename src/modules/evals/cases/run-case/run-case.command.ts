import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { StartedBatch, StartRequest } from '../../batches/batch-starter';

/** Which case to run again, how, and on which of its variants (null: all it has run on). */
export interface RunCaseRequest {
  caseId: string;
  trials: number;
  variantIds: string[] | null;
  /** The start, but for the plan: the handler plans it from the stored case. */
  start: Omit<StartRequest, 'plan' | 'context'>;
}

/** evals.cases.run: the case to run, and the request it came from. */
export class RunCaseCommand extends Command<StartedBatch> {
  constructor(
    readonly payload: RunCaseRequest,
    readonly context: CommandContext,
  ) {
    super();
  }
}
