import { EnvironmentCommand, environmentDecider, VariableToSet } from './environment.decider';
import type { EnvironmentEvent } from './environment.events';
import { NotFound } from '#shared/errors';
import { given } from '../../../test/support/decider-spec';

const T0 = new Date('2026-01-01T00:00:00.000Z');
const T1 = new Date('2026-01-01T00:01:00.000Z');
const variable = (sealedValue: string, newVariableId = 'var_1'): VariableToSet => ({
  name: 'TOKEN',
  secret: true,
  sealedValue,
  preview: '••••••••',
  newVariableId,
});
const setVariables = (variables: VariableToSet[], now = T0): EnvironmentCommand => ({ type: 'SetVariables', organization: 'acme', variables, now });
const set = (sealedValue: string, revision: number, createdAt: Date, updatedAt: Date): EnvironmentEvent => ({
  type: 'EnvironmentVariableSet',
  data: {
    organization: 'acme',
    variableId: 'var_1',
    name: 'TOKEN',
    secret: true,
    sealedValue,
    preview: '••••••••',
    revision,
    scope: 'organization',
    createdAt: createdAt.toISOString(),
    updatedAt: updatedAt.toISOString(),
  },
});
const removed: EnvironmentEvent = {
  type: 'EnvironmentVariableRemoved',
  data: { organization: 'acme', variableId: 'var_1', name: 'TOKEN', removedAt: T1.toISOString() },
};
const use = (names: string[]): EnvironmentCommand => ({ type: 'RecordVariablesUse', organization: 'acme', names, trialId: 'trial_1', now: T1 });

describe('the environment decider', () => {
  it('sets a new variable at revision 1 with the id the command brings', () => {
    given(environmentDecider, [])
      .when(setVariables([variable('sealed-a')]))
      .then([set('sealed-a', 1, T0, T0)]);
  });

  it('replacing a value keeps the id and creation time and adds a revision', () => {
    given(environmentDecider, [set('sealed-a', 1, T0, T0)])
      .when(setVariables([variable('sealed-b', 'var_unused')], T1))
      .then([set('sealed-b', 2, T0, T1)]);
  });

  it('removes a variable, and refuses one that does not exist (or no longer does) with NotFound', () => {
    const remove: EnvironmentCommand = { type: 'RemoveVariable', organization: 'acme', name: 'TOKEN', now: T1 };
    given(environmentDecider, [set('sealed-a', 1, T0, T0)])
      .when(remove)
      .then([removed]);
    given(environmentDecider, []).when(remove).thenThrows(NotFound, 'The environment variable "TOKEN" does not exist.');
    given(environmentDecider, [set('sealed-a', 1, T0, T0), removed])
      .when(remove)
      .thenThrows(NotFound, 'The environment variable "TOKEN" does not exist.');
  });

  it('records the use of the variables that exist, and nothing when none does', () => {
    given(environmentDecider, [set('sealed-a', 1, T0, T0)])
      .when(use(['TOKEN', 'GONE']))
      .then([{ type: 'EnvironmentVariablesUsed', data: { organization: 'acme', names: ['TOKEN'], trialId: 'trial_1', usedAt: T1.toISOString() } }]);
    given(environmentDecider, [set('sealed-a', 1, T0, T0), removed])
      .when(use(['TOKEN']))
      .then([]);
  });
});
