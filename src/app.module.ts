import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE, Reflector } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { EVENT_STORE } from './infrastructure/event-store/event-store.port';
import { AllExceptionsFilter } from './infrastructure/http/all-exceptions.filter';
import { DecodePipe } from './infrastructure/http/decode/decode.pipe';
import { READ_STORE } from './infrastructure/read-store/read-store.port';
import { CLOCK, systemClock } from './shared/clock';
import { apiKeyProjection } from './modules/auth/api-keys/api-key.projection';
import { ApiKeyAuthenticator } from './modules/auth/authentication/api-key.authenticator';
import { AuthGuard } from './modules/auth/authentication/auth.guard';
import { OAuthVerifier } from './modules/auth/authentication/oauth.verifier';
import { AuthModule } from './modules/auth/auth.module';
import { ConnectorsModule } from './modules/connectors/connectors.module';
import { EnvironmentModule } from './modules/environment/environment.module';
import { EvalsModule } from './modules/evals/evals.module';
import { EXECUTION_POLICY, ExecutionPolicy } from './modules/evals/shared/execution-policy';
import { HealthController } from './modules/operations/health.controller';
import { PromptsModule } from './modules/prompts/prompts.module';
import { RUNTIME, Runtime } from './runtime';

/** The stores and cross-cutting HTTP behaviour, shared by every feature module. */
@Global()
@Module({})
export class InfrastructureModule {
  static forRuntime(runtime: Runtime, policy: ExecutionPolicy | null): DynamicModule {
    return {
      module: InfrastructureModule,
      providers: [
        { provide: RUNTIME, useValue: runtime },
        ...(policy ? [{ provide: EXECUTION_POLICY, useValue: policy }] : []),
        { provide: EVENT_STORE, useValue: runtime.eventStore },
        { provide: READ_STORE, useValue: runtime.readStore },
        { provide: CLOCK, useValue: systemClock },
      ],
      exports: [RUNTIME, EVENT_STORE, READ_STORE, CLOCK, ...(policy ? [EXECUTION_POLICY] : [])],
    };
  }
}

@Module({})
export class AppModule {
  /** `policy`: the execution settings the start use cases check (null: the strictest). */
  static forRuntime(runtime: Runtime, policy: ExecutionPolicy | null = null): DynamicModule {
    const oauth = runtime.config.oauth ? new OAuthVerifier(runtime.config.oauth) : null;
    return {
      module: AppModule,
      imports: [InfrastructureModule.forRuntime(runtime, policy), CqrsModule.forRoot(), AuthModule, EvalsModule, PromptsModule, ConnectorsModule, EnvironmentModule],
      controllers: [HealthController],
      providers: [
        { provide: APP_PIPE, useClass: DecodePipe },
        { provide: APP_FILTER, useValue: new AllExceptionsFilter(runtime.logger) },
        {
          provide: APP_GUARD,
          useFactory: (reflector: Reflector) => new AuthGuard(reflector, new ApiKeyAuthenticator(runtime.readStore, () => runtime.projections.generation(apiKeyProjection.name)), oauth),
          inject: [Reflector],
        },
      ],
    };
  }
}
