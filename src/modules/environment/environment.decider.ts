import type { Decider } from '#shared/decider';
import { NotFound } from '#shared/errors';
import type { EnvironmentEvent, EnvironmentVariableSet } from './environment.events';

export interface VariableToSet {
  name: string;
  secret: boolean;
  sealedValue: string;
  preview: string;
  /** The id the variable gets if the name is new; an existing variable keeps its own. */
  newVariableId: string;
}

export interface SetVariables {
  type: 'SetVariables';
  organization: string;
  variables: VariableToSet[];
  now: Date;
}

export interface RemoveVariable {
  type: 'RemoveVariable';
  organization: string;
  name: string;
  now: Date;
}

export interface RecordVariablesUse {
  type: 'RecordVariablesUse';
  organization: string;
  names: string[];
  trialId: string | null;
  now: Date;
}

export type EnvironmentCommand = SetVariables | RemoveVariable | RecordVariablesUse;

export type StoredVariable = Omit<EnvironmentVariableSet['data'], 'organization'> & { lastUsedAt: string | null };

/** The organization's variables by name, as the stream leaves them. */
export interface EnvironmentState {
  variables: ReadonlyMap<string, StoredVariable>;
}

export const environmentDecider: Decider<EnvironmentCommand, EnvironmentState, EnvironmentEvent> = {
  initialState: { variables: new Map() },

  evolve(state, event) {
    const variables = new Map(state.variables);
    switch (event.type) {
      case 'EnvironmentVariableSet': {
        const { organization: _organization, ...stored } = event.data;
        variables.set(stored.name, { ...stored, lastUsedAt: state.variables.get(stored.name)?.lastUsedAt ?? null });
        break;
      }
      case 'EnvironmentVariableRemoved':
        variables.delete(event.data.name);
        break;
      case 'EnvironmentVariablesUsed':
        for (const name of event.data.names) {
          const variable = variables.get(name);
          if (variable) variables.set(name, { ...variable, lastUsedAt: event.data.usedAt });
        }
    }
    return { variables };
  },

  decide(command, state) {
    switch (command.type) {
      case 'SetVariables':
        return command.variables.map((variable) => set(command.organization, variable, state, command.now.toISOString()));
      case 'RemoveVariable': {
        const variable = state.variables.get(command.name);
        if (!variable) throw new NotFound(`The environment variable "${command.name}" does not exist.`);
        const { organization, name } = command;
        return [{ type: 'EnvironmentVariableRemoved', data: { organization, variableId: variable.variableId, name, removedAt: command.now.toISOString() } }];
      }
      case 'RecordVariablesUse': {
        const names = command.names.filter((name) => state.variables.has(name));
        if (names.length === 0) return [];
        return [
          {
            type: 'EnvironmentVariablesUsed',
            data: { organization: command.organization, names, trialId: command.trialId, usedAt: command.now.toISOString() },
          },
        ];
      }
    }
  },
};

/** Setting an existing name replaces its value, keeps its id and creation time, and adds a revision. */
function set(organization: string, variable: VariableToSet, state: EnvironmentState, at: string): EnvironmentEvent {
  const existing = state.variables.get(variable.name);
  const { name, secret, sealedValue, preview } = variable;
  return {
    type: 'EnvironmentVariableSet',
    data: {
      organization,
      variableId: existing?.variableId ?? variable.newVariableId,
      name,
      secret,
      sealedValue,
      preview,
      revision: (existing?.revision ?? 0) + 1,
      scope: 'organization',
      createdAt: existing?.createdAt ?? at,
      updatedAt: at,
    },
  };
}
