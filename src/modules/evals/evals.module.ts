import { DynamicModule, Module } from '@nestjs/common';
import { GetBatchController } from './batches/get-batch/get-batch.controller';
import { GetBatchHandler } from './batches/get-batch/get-batch.handler';
import { BatchStarter } from './batches/batch-starter';
import { StartBatchController } from './batches/start-batch/start-batch.controller';
import { StartBatchHandler } from './batches/start-batch/start-batch.handler';
import { RunCaseController } from './cases/run-case/run-case.controller';
import { RunCaseHandler } from './cases/run-case/run-case.handler';
import { GetRunController } from './runs/get-run/get-run.controller';
import { GetRunHandler } from './runs/get-run/get-run.handler';
import type { TrialExecutionPlan } from './orchestration/execution-host';
import { OrchestrationModule } from './orchestration/orchestration.module';

import { ListBatchesController } from './batches/list-batches/list-batches.controller';
import { ListBatchesHandler } from './batches/list-batches/list-batches.handler';
import { GetCaseController } from './cases/get-case/get-case.controller';
import { GetCaseHandler } from './cases/get-case/get-case.handler';
import { ListCasesController } from './cases/list-cases/list-cases.controller';
import { ListCasesHandler } from './cases/list-cases/list-cases.handler';
import { ListModelsController } from './models/list-models/list-models.controller';
import { ListModelsHandler } from './models/list-models/list-models.handler';
import { ListRunsController } from './runs/list-runs/list-runs.controller';
import { ListRunsHandler } from './runs/list-runs/list-runs.handler';
import { GetSuiteController } from './suites/get-suite/get-suite.controller';
import { GetSuiteHandler } from './suites/get-suite/get-suite.handler';
import { ListSuitesController } from './suites/list-suites/list-suites.controller';
import { ListSuitesHandler } from './suites/list-suites/list-suites.handler';

/** The read side beyond batches.get and runs.get: lists, cases, suites and models. */
const readControllers = [
  ListBatchesController,
  ListRunsController,
  GetCaseController,
  ListCasesController,
  GetSuiteController,
  ListSuitesController,
  ListModelsController,
];
const readHandlers = [ListBatchesHandler, ListRunsHandler, GetCaseHandler, ListCasesHandler, GetSuiteHandler, ListSuitesHandler, ListModelsHandler];

@Module({
  controllers: [StartBatchController, RunCaseController, GetBatchController, GetRunController, ...readControllers],
  providers: [BatchStarter, StartBatchHandler, RunCaseHandler, GetBatchHandler, GetRunHandler, ...readHandlers],
})
export class EvalsModule {
  /** With the orchestration that runs the batches started here, over this process's trial execution plan. */
  static forPlan(plan: TrialExecutionPlan): DynamicModule {
    return { module: EvalsModule, imports: [OrchestrationModule.forPlan(plan)] };
  }
}
