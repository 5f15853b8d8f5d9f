import { DynamicModule, Module } from '@nestjs/common';
import type { ServiceMetrics } from '#infrastructure/metrics/service-metrics';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { TrialMetrics } from './trial-metrics';

/** The evals' metrics, in the application only when the operator turned metrics on. */
@Module({})
export class TrialMetricsModule {
  static into(metrics: ServiceMetrics): DynamicModule {
    return {
      module: TrialMetricsModule,
      providers: [
        {
          provide: TrialMetrics,
          useFactory: (projections: ProjectionRunner, readStore: ReadStore) => new TrialMetrics(metrics, projections, readStore),
          inject: [ProjectionRunner, READ_STORE],
        },
      ],
    };
  }
}
