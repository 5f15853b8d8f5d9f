import { Module } from '@nestjs/common';
import { KeyRing, keyRingOf } from '../../infrastructure/secrets/key-ring';
import { RUNTIME, Runtime } from '../../runtime';
import { AddConnectorController } from './add-connector/add-connector.controller';
import { AddConnectorHandler } from './add-connector/add-connector.handler';
import { ListConnectorsController } from './list-connectors/list-connectors.controller';
import { ListConnectorsHandler } from './list-connectors/list-connectors.handler';
import { ListIntegrationsController } from './list-integrations/list-integrations.controller';
import { RemoveConnectorController } from './remove-connector/remove-connector.controller';
import { RemoveConnectorHandler } from './remove-connector/remove-connector.handler';

/** Connectors: the integration catalogue and the organization's sealed credentials. */
@Module({
  controllers: [ListIntegrationsController, ListConnectorsController, AddConnectorController, RemoveConnectorController],
  providers: [
    { provide: KeyRing, useFactory: (runtime: Runtime) => keyRingOf(runtime), inject: [RUNTIME] },
    AddConnectorHandler,
    ListConnectorsHandler,
    RemoveConnectorHandler,
  ],
})
export class ConnectorsModule {}
