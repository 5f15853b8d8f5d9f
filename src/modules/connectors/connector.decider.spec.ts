import { AddConnector, ConnectorCommand, connectorDecider } from './connector.decider';
import type { ConnectorEvent } from './connector.events';
import { Conflict, NotFound } from '#shared/errors';
import { given } from '../../../test/support/decider-spec';

const now = new Date('2026-01-01T00:00:00.000Z');
const at = now.toISOString();
const ref = { organization: 'acme', connectionId: 'con_1' };
const add = (scope: 'organization' | 'personal' = 'organization'): AddConnector => ({
  type: 'AddConnector',
  ...ref,
  integrationId: 'github',
  authMethodId: 'token',
  name: 'GitHub',
  scope,
  owner: 'key_1',
  isDefault: true,
  sealedValues: 'sealed',
  now,
});
const added = (scope: 'organization' | 'personal' = 'organization'): ConnectorEvent => {
  const { type: _type, now: _now, ...data } = add(scope);
  return { type: 'ConnectorAdded', data: { ...data, addedAt: at } };
};
const remove = (actor = 'key_1', organization = 'acme'): ConnectorCommand => ({ type: 'RemoveConnector', organization, connectionId: 'con_1', actor, now });
const removed: ConnectorEvent = { type: 'ConnectorRemoved', data: { ...ref, removedAt: at } };
const use = (authFailed: boolean): ConnectorCommand => ({ type: 'RecordConnectorUse', ...ref, trialId: 'trial_1', authFailed, now });
const used: ConnectorEvent = { type: 'ConnectorUsed', data: { ...ref, trialId: 'trial_1', usedAt: at } };
const invalid: ConnectorEvent = { type: 'ConnectorMarkedInvalid', data: { ...ref, trialId: 'trial_1', markedAt: at } };

describe('the connector decider', () => {
  it('adds a connection with its sealed values, and refuses an id already taken with Conflict', () => {
    given(connectorDecider, []).when(add()).then([added()]);
    given(connectorDecider, [added()]).when(add()).thenThrows(Conflict, 'Connection con_1 already exists.');
  });

  it("removes a visible connection; a removed one, another organization's or another owner's personal one is NotFound", () => {
    given(connectorDecider, [added()]).when(remove('key_2')).then([removed]);
    given(connectorDecider, [added(), removed]).when(remove()).thenThrows(NotFound, 'Connection "con_1" does not exist.');
    given(connectorDecider, [added()]).when(remove('key_1', 'other')).thenThrows(NotFound, 'Connection "con_1" does not exist.');
    given(connectorDecider, [added('personal')])
      .when(remove('key_2'))
      .thenThrows(NotFound, 'Connection "con_1" does not exist.');
    given(connectorDecider, [added('personal')])
      .when(remove('key_1'))
      .then([removed]);
  });

  it('records a use, and marks the connection invalid once when the trial failed to authenticate', () => {
    given(connectorDecider, [added()]).when(use(false)).then([used]);
    given(connectorDecider, [added()]).when(use(true)).then([used, invalid]);
    given(connectorDecider, [added(), used, invalid]).when(use(true)).then([used]);
  });

  it('keeps no record of a use of a removed or unknown connection', () => {
    given(connectorDecider, [added(), removed]).when(use(true)).then([]);
    given(connectorDecider, []).when(use(false)).then([]);
  });
});
