import { DynamicModule, Module } from '@nestjs/common';
import { TrialMetrics } from '#infrastructure/metrics/trial-metrics';
import type { ServiceMetrics } from '#infrastructure/metrics/service-metrics';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { observeExecution } from '#trial-runner';
import { BATCHES, BatchDocument } from './batches/batch.projection';
import { RUNS, RunDocument } from './runs/run.projection';

/**
 * The evals' metrics, in the application only when the operator turned metrics on: the
 * infrastructure's trial metrics, fed from the running batches' documents and the trial engine.
 */
@Module({})
export class TrialMetricsModule {
  static into(metrics: ServiceMetrics): DynamicModule {
    return {
      module: TrialMetricsModule,
      providers: [
        {
          provide: TrialMetrics,
          useFactory: (projections: ProjectionRunner, readStore: ReadStore) =>
            new TrialMetrics(metrics, projections, { unfinishedTrials: () => unfinishedTrials(readStore), observeExecution }),
          inject: [ProjectionRunner, READ_STORE],
        },
      ],
    };
  }
}

async function unfinishedTrials(readStore: ReadStore): Promise<{ queued: number; running: number }> {
  const counts = { queued: 0, running: 0 };
  const batches = await readStore.collection<BatchDocument>(BATCHES).find({ status: 'running' });
  for (const batch of batches) {
    const runs = await readStore.collection<RunDocument>(RUNS).find({ organization: batch.organization, batchId: batch._id });
    for (const trial of runs.flatMap((run) => run.trials)) {
      if (trial.status === 'queued') counts.queued += 1;
      else if (trial.status === 'running') counts.running += 1;
    }
  }
  return counts;
}
