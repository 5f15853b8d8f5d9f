import { Controller } from '@nestjs/common';
import { Operation } from '#infrastructure/http/operation.decorator';
import { Integration, listIntegrations } from '../integrations/integration-catalogue';

@Controller()
export class ListIntegrationsController {
  /** The catalogue the server can connect: the same for every organization, from a data file. */
  @Operation('connectors.integrations', 'connectors:read')
  list(): readonly Integration[] {
    return listIntegrations();
  }
}
