import { Module } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { Clock, CLOCK } from '#shared/clock';
import { environmentValues } from '../environment/environment-values';
import { TRIAL_ENVIRONMENT } from '../evals/trials/trial-environment';
import { AddConnectorController } from './add-connector/add-connector.controller';
import { AddConnectorHandler } from './add-connector/add-connector.handler';
import { ListConnectorsController } from './list-connectors/list-connectors.controller';
import { ListConnectorsHandler } from './list-connectors/list-connectors.handler';
import { ListIntegrationsController } from './list-integrations/list-integrations.controller';
import { RemoveConnectorController } from './remove-connector/remove-connector.controller';
import { RemoveConnectorHandler } from './remove-connector/remove-connector.handler';
import { TrialSecrets } from './trial-secrets';

/**
 * Connectors: the integration catalogue and the organization's sealed credentials. Exports the
 * trials' environment (TrialSecrets), which the evals orchestration gives each trial.
 */
@Module({
  controllers: [ListIntegrationsController, ListConnectorsController, AddConnectorController, RemoveConnectorController],
  providers: [
    AddConnectorHandler,
    ListConnectorsHandler,
    RemoveConnectorHandler,
    {
      provide: TRIAL_ENVIRONMENT,
      // The organization's variables come through the environment module's public port.
      useFactory: (eventStore: EventStore, readStore: ReadStore, keyRing: KeyRing, logger: JsonLogger, clock: Clock) =>
        new TrialSecrets(environmentValues(eventStore, keyRing), eventStore, readStore, keyRing, logger, clock),
      inject: [EVENT_STORE, READ_STORE, KeyRing, JsonLogger, CLOCK],
    },
  ],
  exports: [TRIAL_ENVIRONMENT],
})
export class ConnectorsModule {}
