import type { Decider } from '#shared/decider';
import { Conflict, NotFound } from '#shared/errors';
import type { ConnectionScope, ConnectionStatus, ConnectorAdded, ConnectorEvent } from './connector.events';

export type AddConnector = Omit<ConnectorAdded['data'], 'addedAt'> & { type: 'AddConnector'; now: Date };

export interface RemoveConnector {
  type: 'RemoveConnector';
  organization: string;
  connectionId: string;
  /** The caller: a personal connection exists only for its owner. */
  actor: string;
  now: Date;
}

export interface RecordConnectorUse {
  type: 'RecordConnectorUse';
  organization: string;
  connectionId: string;
  trialId: string | null;
  authFailed: boolean;
  now: Date;
}

export type ConnectorCommand = AddConnector | RemoveConnector | RecordConnectorUse;

export type ConnectorState =
  | { status: 'absent' }
  | {
      status: ConnectionStatus | 'removed';
      organization: string;
      integrationId: string;
      authMethodId: string;
      owner: string;
      scope: ConnectionScope;
      sealedValues: string;
    };

export const connectorDecider: Decider<ConnectorCommand, ConnectorState, ConnectorEvent> = {
  initialState: { status: 'absent' },

  evolve(state, event) {
    if (event.type === 'ConnectorAdded') {
      const { organization, integrationId, authMethodId, owner, scope, sealedValues } = event.data;
      return { status: 'active', organization, integrationId, authMethodId, owner, scope, sealedValues };
    }
    if (state.status === 'absent') return state;
    if (event.type === 'ConnectorRemoved') return { ...state, status: 'removed' };
    if (event.type === 'ConnectorMarkedInvalid' && state.status !== 'removed') return { ...state, status: 'invalid' };
    return state;
  },

  decide(command, state) {
    switch (command.type) {
      case 'AddConnector':
        return add(command, state);
      case 'RemoveConnector':
        return remove(command, state);
      case 'RecordConnectorUse':
        return recordUse(command, state);
    }
  },
};

function add(command: AddConnector, state: ConnectorState): ConnectorEvent[] {
  if (state.status !== 'absent') throw new Conflict(`Connection ${command.connectionId} already exists.`);
  const { type: _type, now, ...data } = command;
  return [{ type: 'ConnectorAdded', data: { ...data, addedAt: now.toISOString() } }];
}

/** Visible to the caller: of its organization, and when personal, its own. */
export function isVisibleTo(state: ConnectorState, organization: string, actor: string): boolean {
  if (state.status === 'absent' || state.status === 'removed' || state.organization !== organization) return false;
  return state.scope === 'organization' || state.owner === actor;
}

function remove(command: RemoveConnector, state: ConnectorState): ConnectorEvent[] {
  const { organization, connectionId } = command;
  if (!isVisibleTo(state, organization, command.actor)) throw new NotFound(`Connection "${connectionId}" does not exist.`);
  return [{ type: 'ConnectorRemoved', data: { organization, connectionId, removedAt: command.now.toISOString() } }];
}

function recordUse(command: RecordConnectorUse, state: ConnectorState): ConnectorEvent[] {
  // A connection removed while a trial used it keeps no record of that use.
  if (state.status === 'absent' || state.status === 'removed' || state.organization !== command.organization) return [];
  const { organization, connectionId, trialId } = command;
  const at = command.now.toISOString();
  const used: ConnectorEvent = { type: 'ConnectorUsed', data: { organization, connectionId, trialId, usedAt: at } };
  if (!command.authFailed || state.status === 'invalid') return [used];
  return [used, { type: 'ConnectorMarkedInvalid', data: { organization, connectionId, trialId, markedAt: at } }];
}
