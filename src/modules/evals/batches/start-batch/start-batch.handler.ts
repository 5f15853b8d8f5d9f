import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { BatchStarter, StartedBatch } from '../batch-starter';
import { StartBatch } from './start-batch.command';

@CommandHandler(StartBatch)
export class StartBatchHandler implements ICommandHandler<StartBatch, StartedBatch> {
  constructor(private readonly starter: BatchStarter) {}

  execute({ request }: StartBatch): Promise<StartedBatch> {
    return this.starter.start(request);
  }
}
