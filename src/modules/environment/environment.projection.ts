import { typedDocumentProjection } from '../typed-projection';
import { ENVIRONMENT_EVENT_TYPES, EnvironmentEvent } from './environment.events';

export const ENVIRONMENT_VARIABLES = 'environment_variables';

/** A variable's metadata and preview. Never its value, nor its ciphertext. */
export type VariableDocument = {
  _id: string;
  organization: string;
  variableId: string;
  name: string;
  preview: string;
  revision: number;
  scope: 'organization';
  secret: boolean;
  createdAt: string;
  updatedAt: string;
  lastUsedAt: string | null;
};

/** Names are unique in an organization and cannot hold `/`. */
export function variableKey(organization: string, name: string): string {
  return `${organization}/${name}`;
}

export const environmentProjection = typedDocumentProjection<EnvironmentEvent, VariableDocument>({
  name: 'environment-variables',
  collection: ENVIRONMENT_VARIABLES,
  indexes: [{ keys: { organization: 1, name: 1 }, unique: true }],
  eventTypes: ENVIRONMENT_EVENT_TYPES,
  documentId(event) {
    const { organization } = event.data;
    if (event.type === 'EnvironmentVariablesUsed') return event.data.names.map((name) => variableKey(organization, name));
    return variableKey(organization, event.data.name);
  },
  evolve(document, event, id) {
    switch (event.type) {
      case 'EnvironmentVariableSet': {
        const { organization, variableId, name, preview, revision, scope, secret, createdAt, updatedAt } = event.data;
        return { _id: id, organization, variableId, name, preview, revision, scope, secret, createdAt, updatedAt, lastUsedAt: document?.lastUsedAt ?? null };
      }
      case 'EnvironmentVariableRemoved':
        return null;
      case 'EnvironmentVariablesUsed':
        return document && { ...document, lastUsedAt: event.data.usedAt };
    }
  },
});

/** The spec's Environment variable (response form): the document as the API names it. */
export type VariableView = Omit<VariableDocument, '_id' | 'organization' | 'variableId'> & { id: string };

export function variableView(variable: Omit<VariableDocument, '_id' | 'organization'>): VariableView {
  const { variableId, name, preview, revision, scope, secret, createdAt, updatedAt, lastUsedAt } = variable;
  return { id: variableId, name, preview, revision, scope, secret, createdAt, updatedAt, lastUsedAt };
}
