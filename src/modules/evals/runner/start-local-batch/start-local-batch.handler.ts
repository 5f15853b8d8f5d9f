import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { BatchStarter, StartedBatch } from '../../batches/batch-starter';
import { StartLocalBatchCommand } from './start-local-batch.command';

/** The same start as evals.batches.start (slot, idempotency, recorded case versions), flagged local. */
@CommandHandler(StartLocalBatchCommand)
export class StartLocalBatchHandler implements ICommandHandler<StartLocalBatchCommand> {
  constructor(private readonly starter: BatchStarter) {}

  execute({ payload, context }: StartLocalBatchCommand): Promise<StartedBatch> {
    return this.starter.start({ ...payload, context, local: true });
  }
}
