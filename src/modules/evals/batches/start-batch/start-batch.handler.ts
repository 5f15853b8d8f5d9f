import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { BatchStarter, StartedBatch } from '../batch-starter';
import { StartBatchCommand } from './start-batch.command';

@CommandHandler(StartBatchCommand)
export class StartBatchHandler implements ICommandHandler<StartBatchCommand> {
  constructor(private readonly starter: BatchStarter) {}

  execute({ payload, context }: StartBatchCommand): Promise<StartedBatch> {
    return this.starter.start({ ...payload, context });
  }
}
