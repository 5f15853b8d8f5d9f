import type { DomainEvent } from '#infrastructure/event-store/stream-command';

export type ConnectionScope = 'organization' | 'personal';
export const CONNECTION_SCOPES: readonly ConnectionScope[] = ['organization', 'personal'];
export type ConnectionStatus = 'active' | 'invalid';

interface ConnectorRef {
  organization: string;
  connectionId: string;
}

/**
 * Stored in `connector-{org}.{id}`. The values are in `sealedValues` only: the JSON of the
 * field values, sealed with AES-256-GCM under the organization's data key and bound to the
 * organization, the connection, its integration and its auth method. No event holds a value.
 */
export type ConnectorAdded = DomainEvent<
  'ConnectorAdded',
  ConnectorRef & {
    integrationId: string;
    authMethodId: string;
    name: string;
    scope: ConnectionScope;
    /** Who added it (key id or `oauth:<subject>`): a personal connection is theirs alone. */
    owner: string;
    /** It becomes its integration's default, and the previous default stops being one. */
    isDefault: boolean;
    sealedValues: string;
    addedAt: string;
  }
>;

export type ConnectorRemoved = DomainEvent<'ConnectorRemoved', ConnectorRef & { removedAt: string }>;

/** A trial used the connection (its values were given to the trial's processes). */
export type ConnectorUsed = DomainEvent<'ConnectorUsed', ConnectorRef & { trialId: string | null; usedAt: string }>;

/** A trial using the connection failed to authenticate, as its driver detected. */
export type ConnectorMarkedInvalid = DomainEvent<'ConnectorMarkedInvalid', ConnectorRef & { trialId: string | null; markedAt: string }>;

export type ConnectorEvent = ConnectorAdded | ConnectorRemoved | ConnectorUsed | ConnectorMarkedInvalid;

export const CONNECTOR_EVENT_TYPES = ['ConnectorAdded', 'ConnectorRemoved', 'ConnectorUsed', 'ConnectorMarkedInvalid'] as const;

/** Neither organization ids nor connector ids hold `.`, so the name is unambiguous. */
export function connectorStream(organization: string, connectionId: string): string {
  return `connector-${organization}.${connectionId}`;
}
