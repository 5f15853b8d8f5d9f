import { DynamicModule, Module } from '@nestjs/common';
import { GetBatchController } from './batches/get-batch/get-batch.controller';
import { GetBatchHandler } from './batches/get-batch/get-batch.handler';
import { BatchStarter } from './batches/batch-starter';
import { StartBatchController } from './batches/start-batch/start-batch.controller';
import { StartBatchHandler } from './batches/start-batch/start-batch.handler';
import { RunCaseController } from './cases/run-case/run-case.controller';
import { RunCaseHandler } from './cases/run-case/run-case.handler';
import { GetRunController } from './runs/get-run/get-run.controller';
import { ModelCallsController } from './trials/model-calls/model-calls.controller';
import { ListModelCallsHandler } from './trials/model-calls/model-calls.handler';
import { TrialFilesController } from './trials/trial-files/trial-files.controller';
import { GetTrialArtifactHandler, GetTrialDiffHandler } from './trials/trial-files/trial-files.handlers';
import { ARTIFACT_READER } from './trials/trial-files/artifact-reader';
import { GetRunHandler } from './runs/get-run/get-run.handler';
import { RescoreRunController } from './runs/rescore-run/rescore-run.controller';
import { RescoreRunHandler } from './runs/rescore-run/rescore-run.handler';
import { JUDGE_SETTINGS } from './shared/judge-settings';
import { ConnectorsModule } from '../connectors/connectors.module';
import type { TrialExecutionPlan } from './orchestration/execution-host';
import { OrchestrationModule } from './orchestration/orchestration.module';
import { BeatController } from './runner/beat/beat.controller';
import { BeatHandler } from './runner/beat/beat.handler';
import { FinishLocalBatchController } from './runner/finish-local-batch/finish-local-batch.controller';
import { FinishLocalBatchHandler } from './runner/finish-local-batch/finish-local-batch.handler';
import { LeaseTrialsController } from './runner/lease-trials/lease-trials.controller';
import { LeaseTrialsHandler } from './runner/lease-trials/lease-trials.handler';
import { ReportTrialController } from './runner/report-trial/report-trial.controller';
import { ReportTrialHandler } from './runner/report-trial/report-trial.handler';
import { RUNNER_SETTINGS } from './runner/runner-settings';
import { StartLocalBatchController } from './runner/start-local-batch/start-local-batch.controller';
import { StartLocalBatchHandler } from './runner/start-local-batch/start-local-batch.handler';

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
  ModelCallsController,
  TrialFilesController,
];
/** The local runner's operations (runner.*): it runs the trials of `local` variants on its own machine. */
const runnerControllers = [StartLocalBatchController, LeaseTrialsController, ReportTrialController, BeatController, FinishLocalBatchController];
const runnerHandlers = [StartLocalBatchHandler, LeaseTrialsHandler, ReportTrialHandler, BeatHandler, FinishLocalBatchHandler];
const readHandlers = [
  ListBatchesHandler,
  ListRunsHandler,
  GetCaseHandler,
  ListCasesHandler,
  GetSuiteHandler,
  ListSuitesHandler,
  ListModelsHandler,
  ListModelCallsHandler,
  GetTrialDiffHandler,
  GetTrialArtifactHandler,
];

@Module({
  controllers: [StartBatchController, RunCaseController, GetBatchController, GetRunController, RescoreRunController, ...readControllers, ...runnerControllers],
  providers: [BatchStarter, StartBatchHandler, RunCaseHandler, GetBatchHandler, GetRunHandler, RescoreRunHandler, ...readHandlers, ...runnerHandlers],
})
export class EvalsModule {
  /** With the orchestration that runs the batches started here, over this process's trial execution plan. */
  static forPlan(plan: TrialExecutionPlan): DynamicModule {
    return {
      module: EvalsModule,
      imports: [OrchestrationModule.forPlan(plan), ConnectorsModule],
      providers: [
        { provide: RUNNER_SETTINGS, useValue: plan.localRunners },
        { provide: JUDGE_SETTINGS, useValue: plan.judging },
        { provide: ARTIFACT_READER, useValue: plan.artifacts },
      ],
    };
  }
}
