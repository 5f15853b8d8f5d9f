import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { requestMetadata } from '#shared/caller';
import { BadRequest, NotFound } from '#shared/errors';
import { canonicalJson } from '#shared/hash';
import { newId } from '#shared/ids';
import { ConnectionView, connectionView } from '../connection.projection';
import { checkValues } from '../connector-values';
import { AddConnector, connectorDecider } from '../connector.decider';
import { connectorStream } from '../connector.events';
import { AuthMethod, findAuthMethod, findIntegration } from '../integrations/integration-catalogue';
import { AddConnectorCommand } from './add-connector.command';

@CommandHandler(AddConnectorCommand)
export class AddConnectorHandler implements ICommandHandler<AddConnectorCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    private readonly keyRing: KeyRing,
  ) {}

  async execute({ payload, context }: AddConnectorCommand): Promise<ConnectionView> {
    const { organization, integrationId, authMethodId, name, values, isDefault, scope, owner, now } = payload;
    checkValues(authMethodOf(integrationId, authMethodId), values);
    if (isDefault && scope === 'personal') {
      throw new BadRequest("A personal connection cannot be its integration's default: the default serves every trial of the organization.");
    }
    const connectionId = newId('con', now.getTime());
    // Sealed here, on arrival: from this line on only the ciphertext exists.
    const binding = { kind: 'connection' as const, organization, connectionId, integrationId, authMethodId };
    const sealedValues = await this.keyRing.seal(binding, canonicalJson(values));
    // The field order is the stored event's: the decider copies the command into ConnectorAdded.
    const add: AddConnector = {
      type: 'AddConnector',
      organization,
      connectionId,
      integrationId,
      authMethodId,
      name,
      scope,
      owner,
      isDefault,
      sealedValues,
      now,
    };
    await executeOnStream(this.eventStore, connectorStream(organization, connectionId), connectorDecider, add, requestMetadata(context));
    const createdAt = now.toISOString();
    return connectionView({
      _id: connectionId,
      organization,
      integrationId,
      authMethodId,
      name,
      isDefault,
      scope,
      owner,
      status: 'active',
      createdAt,
      lastUsedAt: null,
    });
  }
}

function authMethodOf(integrationId: string, authMethodId: string): AuthMethod {
  const integration = findIntegration(integrationId);
  if (!integration) throw new NotFound(`Integration "${integrationId}" does not exist; connectors.integrations lists those that do.`);
  const method = findAuthMethod(integration, authMethodId);
  if (!method) {
    const known = integration.authMethods.map((candidate) => candidate.id).join(', ');
    throw new NotFound(`Integration "${integrationId}" has no auth method "${authMethodId}"; it has: ${known}.`);
  }
  return method;
}
