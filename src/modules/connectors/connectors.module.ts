import { Module } from '@nestjs/common';
import { TRIAL_ENVIRONMENT } from '../evals/orchestration/trial-environment';
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
  providers: [AddConnectorHandler, ListConnectorsHandler, RemoveConnectorHandler, { provide: TRIAL_ENVIRONMENT, useClass: TrialSecrets }],
  exports: [TRIAL_ENVIRONMENT],
})
export class ConnectorsModule {}
