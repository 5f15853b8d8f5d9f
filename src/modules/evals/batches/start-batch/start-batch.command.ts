import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { StartedBatch, StartRequest } from '../batch-starter';

/** evals.batches.start: what the batch starter takes (no single decider decides a start), and the request. */
export class StartBatchCommand extends Command<StartedBatch> {
  constructor(
    readonly payload: Omit<StartRequest, 'context'>,
    readonly context: CommandContext,
  ) {
    super();
  }
}
