import { evolveGuardedDeleting, isTombstone, tombstone } from '#infrastructure/processing/projection';
import type { Collection } from '#infrastructure/read-store/read-store.port';
import { typedProjection } from '../typed-projection';
import { CONNECTOR_EVENT_TYPES, ConnectionScope, ConnectionStatus, ConnectorAdded, ConnectorEvent } from './connector.events';

export const CONNECTIONS = 'connections';

/** A connection's metadata. Never its values, nor their ciphertext: those stay in the log. */
export type ConnectionDocument = {
  _id: string;
  /** The log position this document reflects (see ProjectedDocument). */
  _position: number;
  organization: string;
  integrationId: string;
  authMethodId: string;
  name: string;
  isDefault: boolean;
  scope: ConnectionScope;
  owner: string;
  status: ConnectionStatus;
  createdAt: string;
  lastUsedAt: string | null;
};

/**
 * One document per connection. Adding a default also unsets the integration's previous
 * default: an update of other documents, guarded by position like every change, so a
 * redelivery or a replay leaves the same documents.
 */
export const connectionProjection = typedProjection<ConnectorEvent>({
  name: 'connections',
  eventTypes: CONNECTOR_EVENT_TYPES,
  collections: { [CONNECTIONS]: [{ keys: { organization: 1, createdAt: -1 } }, { keys: { organization: 1, integrationId: 1, isDefault: 1 } }] },
  async project(event, store) {
    const collection = store.collection<ConnectionDocument>(CONNECTIONS);
    if (event.type === 'ConnectorAdded') return added(collection, event.data, event.position);
    // Each write names the position it read: a lapsed owner's late write cannot undo a newer one.
    await evolveGuardedDeleting(collection, event.data.connectionId, (current) => {
      if (!current || isTombstone(current) || current._position >= event.position) return undefined;
      if (event.type === 'ConnectorRemoved') return tombstone(current._id, event.position);
      const change = event.type === 'ConnectorUsed' ? { lastUsedAt: event.data.usedAt } : { status: 'invalid' as const };
      return { ...current, ...change, _position: event.position };
    });
  },
});

async function added(collection: Collection<ConnectionDocument>, data: ConnectorAdded['data'], position: number): Promise<void> {
  const { connectionId, organization, integrationId, authMethodId, name, isDefault, scope, owner, addedAt } = data;
  if (isDefault) {
    await collection.updateMany(
      { organization, integrationId, isDefault: true, _id: { $ne: connectionId }, _position: { $lt: position } },
      { $set: { isDefault: false, _position: position } },
    );
  }
  const document: ConnectionDocument = {
    _id: connectionId,
    _position: position,
    organization,
    integrationId,
    authMethodId,
    name,
    isDefault,
    scope,
    owner,
    status: 'active',
    createdAt: addedAt,
    lastUsedAt: null,
  };
  // A tombstone at a later position is the removal of this connection: it stays removed.
  await evolveGuardedDeleting(collection, connectionId, (current) => (current && current._position >= position ? undefined : document));
}

/** The spec's Connection: what a client may see of a connection. */
export interface ConnectionView {
  id: string;
  integrationId: string;
  authMethodId: string;
  name: string;
  isDefault: boolean;
  scope: ConnectionScope;
  status: ConnectionStatus;
  createdAt: string;
  lastUsedAt: string | null;
}

export function connectionView(document: Omit<ConnectionDocument, '_position'>): ConnectionView {
  const { _id, integrationId, authMethodId, name, isDefault, scope, status, createdAt, lastUsedAt } = document;
  return { id: _id, integrationId, authMethodId, name, isDefault, scope, status, createdAt, lastUsedAt };
}
