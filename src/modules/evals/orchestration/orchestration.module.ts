import { DynamicModule, Module } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { Clock, CLOCK } from '#shared/clock';
import { ConnectorsModule } from '../../connectors/connectors.module';
import { EXECUTION_POLICY } from '../shared/execution-policy';
import { HARNESS_AGENTS, PROVIDER_MODELS } from '../shared/provider-models';
import type { TrialExecutionPlan } from './execution-host';
import { TRIAL_ENVIRONMENT, TrialEnvironment } from '../trials/trial-environment';
import { sagaCatchUpAfter } from './open-batches.projection';
import { TrialSaga } from './trial-saga';

/**
 * Runs the batches this server starts: the trial saga, a provider that starts when the
 * application boots (before it listens) and stops when it shuts down (after the HTTP server
 * closed). It drives the plan's trial runner through the TrialRunner port and gives trials the
 * connectors' environment. Exports the execution policy the start use cases check and the
 * configured providers' models the model list shows.
 */
@Module({})
export class OrchestrationModule {
  static forPlan(plan: TrialExecutionPlan): DynamicModule {
    return {
      module: OrchestrationModule,
      imports: [ConnectorsModule],
      providers: [
        { provide: EXECUTION_POLICY, useValue: plan.policy },
        { provide: PROVIDER_MODELS, useValue: plan.providerModels },
        { provide: HARNESS_AGENTS, useValue: plan.harnessAgents },
        {
          provide: TrialSaga,
          useFactory: (
            eventStore: EventStore,
            environment: TrialEnvironment,
            logger: JsonLogger,
            clock: Clock,
            readStore: ReadStore,
            projections: ProjectionRunner,
          ) =>
            new TrialSaga(eventStore, plan.runner, environment, logger, {
              maxParallelTrials: plan.maxParallelTrials,
              clock,
              runner: plan.localRunners,
              claims: plan.claims,
              catchUpAfter: () => sagaCatchUpAfter(readStore, projections),
            }),
          inject: [EVENT_STORE, TRIAL_ENVIRONMENT, JsonLogger, CLOCK, READ_STORE, ProjectionRunner],
        },
      ],
      exports: [EXECUTION_POLICY, PROVIDER_MODELS, HARNESS_AGENTS],
    };
  }
}
