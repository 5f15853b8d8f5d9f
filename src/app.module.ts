import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE, Reflector } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { AllExceptionsFilter } from '#infrastructure/http/all-exceptions.filter';
import { DecodePipe } from '#infrastructure/http/decode/decode.pipe';
import { InfrastructureModule } from '#infrastructure/infrastructure.module';
import type { ServiceMetrics } from '#infrastructure/metrics/service-metrics';
import type { KeyRing } from '#infrastructure/secrets/key-ring';
import { AuditModule } from '#modules/audit/audit.module';
import { apiKeyProjection } from '#modules/auth/api-keys/api-key.projection';
import { ApiKeyAuthenticator } from '#modules/auth/authentication/api-key.authenticator';
import { AuthGuard } from '#modules/auth/authentication/auth.guard';
import { OAuthVerifier } from '#modules/auth/authentication/oauth.verifier';
import { AnalyticsModule } from '#modules/analytics/analytics.module';
import { AuthModule } from '#modules/auth/auth.module';
import { ConnectorsModule } from '#modules/connectors/connectors.module';
import { EnvironmentModule } from '#modules/environment/environment.module';
import { WatchBatchModule } from '#modules/evals/batches/watch-batch/watch-batch.module';
import { EvalsModule } from '#modules/evals/evals.module';
import type { TrialExecutionPlan } from '#modules/evals/orchestration/execution-host';
import { TrialMetricsModule } from '#modules/evals/trial-metrics.module';
import { ApiReferenceModule } from '#modules/operations/api-reference/api-reference.module';
import { HealthController } from '#modules/operations/health.controller';
import { PromptsModule } from '#modules/prompts/prompts.module';
import type { Runtime } from './runtime';

@Module({})
export class AppModule {
  /**
   * The application over what the composition root opened: the runtime's stores, the process's
   * key ring, the plan of how this process runs trials, and the metrics when they are on.
   */
  static forRuntime(runtime: Runtime, keyRing: KeyRing, execution: TrialExecutionPlan, metrics: ServiceMetrics | null = null): DynamicModule {
    const oauth = runtime.config.oauth ? new OAuthVerifier(runtime.config.oauth) : null;
    return {
      module: AppModule,
      imports: [
        InfrastructureModule.forRoot({ ...runtime, keyRing }),
        CqrsModule.forRoot(),
        AuthModule,
        EvalsModule.forPlan(execution),
        PromptsModule,
        ConnectorsModule,
        EnvironmentModule,
        WatchBatchModule.withLimit(runtime.config.watchStreamsPerOrganization),
        ApiReferenceModule,
        ...(metrics ? [TrialMetricsModule.into(metrics)] : []),
        AuditModule,
        AnalyticsModule,
      ],
      controllers: [HealthController],
      providers: [
        { provide: APP_PIPE, useClass: DecodePipe },
        { provide: APP_FILTER, useValue: new AllExceptionsFilter(runtime.logger) },
        {
          provide: APP_GUARD,
          useFactory: (reflector: Reflector) =>
            new AuthGuard(reflector, new ApiKeyAuthenticator(runtime.readStore, () => runtime.projections.generation(apiKeyProjection.name)), oauth),
          inject: [Reflector],
        },
      ],
    };
  }
}
