import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { StartedBatch, StartRequest } from '../../batches/batch-starter';

/** runner.batches.start: a batch start whose `local` variants a local runner runs. */
export class StartLocalBatchCommand extends Command<StartedBatch> {
  constructor(
    readonly payload: Omit<StartRequest, 'context' | 'local'>,
    readonly context: CommandContext,
  ) {
    super();
  }
}
