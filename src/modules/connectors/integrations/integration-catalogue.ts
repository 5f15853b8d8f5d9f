import catalogue from './integration-catalogue.json';

export type IntegrationCategory = 'harness' | 'sandbox' | 'model';

export interface IntegrationField {
  label: string;
  name: string;
  required: boolean;
  secret: boolean;
  hint: string;
}

export interface AuthMethod {
  id: string;
  kind: 'secret';
  label: string;
  fields: IntegrationField[];
}

export interface Integration {
  id: string;
  label: string;
  category: IntegrationCategory;
  authMethods: AuthMethod[];
}

/**
 * What the server can connect, from the shipped data file: one integration per harness kind
 * and per sandbox kind (its id is the kind), and model providers.
 */
const integrations = (catalogue as { integrations: Integration[] }).integrations;

export function listIntegrations(): readonly Integration[] {
  return integrations;
}

export function findIntegration(integrationId: string): Integration | null {
  return integrations.find((integration) => integration.id === integrationId) ?? null;
}

export function findAuthMethod(integration: Integration, authMethodId: string): AuthMethod | null {
  return integration.authMethods.find((method) => method.id === authMethodId) ?? null;
}

export function findField(integrationId: string, authMethodId: string, name: string): IntegrationField | null {
  const integration = findIntegration(integrationId);
  const method = integration && findAuthMethod(integration, authMethodId);
  return method?.fields.find((field) => field.name === name) ?? null;
}
