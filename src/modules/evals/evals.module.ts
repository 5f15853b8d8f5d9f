import { Module } from '@nestjs/common';
import { GetBatchController } from './batches/get-batch/get-batch.controller';
import { GetBatchHandler } from './batches/get-batch/get-batch.handler';
import { BatchStarter } from './batches/start-batch/batch-starter';
import { StartBatchController } from './batches/start-batch/start-batch.controller';
import { StartBatchHandler } from './batches/start-batch/start-batch.handler';
import { RunCaseController } from './cases/run-case/run-case.controller';
import { RunCaseHandler } from './cases/run-case/run-case.handler';
import { GetRunController } from './runs/get-run/get-run.controller';
import { GetRunHandler } from './runs/get-run/get-run.handler';

@Module({
  controllers: [StartBatchController, RunCaseController, GetBatchController, GetRunController],
  providers: [BatchStarter, StartBatchHandler, RunCaseHandler, GetBatchHandler, GetRunHandler],
})
export class EvalsModule {}
