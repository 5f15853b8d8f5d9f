import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream, toDomainEvent } from '#infrastructure/event-store/stream-command';
import type { JsonLogger } from '#infrastructure/logging/json-logger';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { SecretUnreadable } from '#infrastructure/secrets/aes-gcm';
import { KeyRing, KeyRingSource, openKeyRing } from '#infrastructure/secrets/key-ring';
import { Clock, systemClock } from '#shared/clock';
import { foldEvents } from '#shared/decider';
import { isReservedVariable } from '#shared/reserved-variables';
import type { VariantDefinition } from '#shared/eval-definitions';
import type { ResolvedTrialEnvironment, TrialEnvironment, TrialUseOutcome } from '../evals/trials/trial-environment';
import { EnvironmentValues, environmentValues } from '../environment/environment-values';
import { ConnectionDocument, CONNECTIONS } from './connection.projection';
import { connectorEnvName } from './connector-values';
import { connectorDecider, ConnectorState } from './connector.decider';
import { ConnectorEvent, connectorStream } from './connector.events';
import { findField } from './integrations/integration-catalogue';

/** A trial cannot get the credentials its variant names: the trial should be voided with this message. */
export class TrialCredentialsUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrialCredentialsUnavailable';
  }
}

export interface ResolveOptions {
  /** Model-provider integrations (openai, anthropic, openai-compatible) whose default connection's key the trial's service calls need. */
  providerIntegrations?: readonly string[];
}

interface WantedConnection {
  organization: string;
  role: 'harness' | 'sandbox';
  /** The id the variant's credentials name, if any. */
  named: string | undefined;
  /** The variant's harness or sandbox kind: its integration's default serves when none is named. */
  kind: string | null;
  requester: string | undefined;
}

interface OpenedConnection {
  connectionId: string;
  env: Record<string, string>;
  secrets: string[];
}

/**
 * The TrialEnvironment of the service: the organization's variables and the variant's
 * connector values, decrypted here, in the trial runner's process, from the sealed values in
 * the event log (read models hold none). `secrets` lists every secret value, for redaction.
 */
export class TrialSecrets implements TrialEnvironment {
  constructor(
    private readonly environment: EnvironmentValues,
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly keyRing: KeyRing,
    private readonly logger: JsonLogger,
    private readonly clock: Clock = systemClock,
  ) {}

  async resolve(organization: string, variant: VariantDefinition, requester?: string, options: ResolveOptions = {}): Promise<ResolvedTrialEnvironment> {
    const variables = await this.variables(organization);
    const credentials = variant.credentials ?? {};
    const connections = [
      await this.connection({ organization, role: 'harness', named: credentials.harnessConnectionId, kind: variant.harness, requester }),
      await this.connection({ organization, role: 'sandbox', named: credentials.sandboxConnectionId, kind: variant.sandbox, requester }),
    ].filter((opened): opened is OpenedConnection => opened !== null);
    const providers = await this.providerKeys(organization, options.providerIntegrations ?? []);
    const env = Object.assign({}, variables.env, ...connections.map((opened) => opened.env)) as Record<string, string>;
    const secrets = [...new Set([...variables.secrets, ...connections.flatMap((opened) => opened.secrets), ...Object.values(providers.keys)])];
    const connectionIds = [...connections.map((opened) => opened.connectionId), ...providers.connectionIds];
    return {
      env,
      secrets,
      connectionIds,
      variableNames: Object.keys(variables.env),
      providerKeys: providers.keys,
      providerConnections: providers.byIntegration,
    };
  }

  /**
   * The `apiKey` of the organization's default connection of each model-provider integration, for
   * the simulated user and judges: the service calls the provider, the trial's processes never
   * see the key (it is not put in `env`).
   */
  async providerKeys(
    organization: string,
    integrations: readonly string[],
  ): Promise<{ keys: Record<string, string>; connectionIds: string[]; byIntegration: Record<string, string> }> {
    const keys: Record<string, string> = {};
    const connectionIds: string[] = [];
    const byIntegration: Record<string, string> = {};
    for (const integrationId of integrations) {
      const connectionId = await this.providerConnection(organization, integrationId);
      if (connectionId === null) continue;
      const state = await this.connectorState(organization, connectionId);
      if (state.status !== 'active' && state.status !== 'invalid') continue;
      const { authMethodId } = state;
      const values = parseValues(await this.keyRing.open({ kind: 'connection', organization, connectionId, integrationId, authMethodId }, state.sealedValues));
      if (typeof values.apiKey !== 'string' || values.apiKey === '') continue;
      keys[integrationId] = values.apiKey;
      connectionIds.push(connectionId);
      byIntegration[integrationId] = connectionId;
    }
    return { keys, connectionIds, byIntegration };
  }

  /**
   * Records that a trial used these connections and variables (lastUsedAt), and marks the
   * connections invalid when the trial failed to authenticate. Never throws: bookkeeping must
   * not change a trial's verdict.
   */
  async recordUse(organization: string, connectionIds: readonly string[], outcome: TrialUseOutcome): Promise<void> {
    const trialId = outcome.trialId ?? null;
    const metadata = { organization, actor: 'system:trial-runner', correlationId: trialId ?? 'trial', causationId: trialId ?? 'trial' };
    const now = this.clock.now();
    for (const connectionId of new Set(connectionIds)) {
      const command = { type: 'RecordConnectorUse' as const, organization, connectionId, trialId, authFailed: outcome.authFailed, now };
      await executeOnStream(this.eventStore, connectorStream(organization, connectionId), connectorDecider, command, metadata, { attempts: 20 }).catch(
        (error: unknown) => this.logger.warn('could not record a connection use', { organization, connectionId, error: (error as Error).message }),
      );
    }
    const names = [...(outcome.variableNames ?? [])];
    if (names.length === 0) return;
    await this.environment
      .recordUse({ organization, names, trialId, now }, metadata)
      .catch((error: unknown) => this.logger.warn('could not record the use of environment variables', { organization, error: (error as Error).message }));
  }

  private async variables(organization: string): Promise<{ env: Record<string, string>; secrets: string[] }> {
    const env: Record<string, string> = {};
    const secrets: string[] = [];
    for (const variable of await this.environment.variables(organization)) {
      const { name } = variable;
      // Stored before reserved names were refused: never given to a trial, never a crash.
      if (isReservedVariable(name)) {
        this.logger.warn('reserved environment variable not given to the trial', { organization, name });
        continue;
      }
      env[name] = await variable.open();
      if (variable.secret) secrets.push(env[name]);
    }
    return { env, secrets };
  }

  /** The connection the variant names, else the default of the integration whose id is its kind. */
  private async connection(wanted: WantedConnection): Promise<OpenedConnection | null> {
    const { organization, role, named, kind } = wanted;
    const connectionId = named ?? (kind ? await this.defaultConnection(organization, kind) : null);
    if (!connectionId) return null;
    const state = await this.connectorState(organization, connectionId);
    const source = named ? `credentials.${role}ConnectionId` : `the default connection of "${kind}"`;
    if (state.status === 'absent' || state.status === 'removed') {
      throw new TrialCredentialsUnavailable(`The connection "${connectionId}" (${source}) does not exist or was removed.`);
    }
    if (state.scope === 'personal' && state.owner !== wanted.requester) {
      throw new TrialCredentialsUnavailable(`The connection "${connectionId}" (${source}) is personal: only batches its owner starts can use it.`);
    }
    const { integrationId, authMethodId } = state;
    // Bound to the organization and connection asked for: a ciphertext copied elsewhere does not open.
    const values = parseValues(await this.keyRing.open({ kind: 'connection', organization, connectionId, integrationId, authMethodId }, state.sealedValues));
    const env: Record<string, string> = {};
    const secrets: string[] = [];
    for (const [field, value] of Object.entries(values)) {
      env[connectorEnvName(role, field)] = value;
      // A field the catalogue no longer knows is treated as secret.
      if (findField(integrationId, authMethodId, field)?.secret ?? true) secrets.push(value);
    }
    return { connectionId, env, secrets };
  }

  /**
   * The integration's default connection, else its only organization connection: adding one
   * OpenAI key should be enough. Several without a default are ambiguous, and none is taken.
   */
  private async providerConnection(organization: string, integrationId: string): Promise<string | null> {
    const chosen = await this.defaultConnection(organization, integrationId);
    if (chosen !== null) return chosen;
    const filter = { organization, integrationId, scope: 'organization', status: { $ne: 'removed' } };
    const found = await this.readStore.collection<ConnectionDocument>(CONNECTIONS).find(filter, { limit: 2 });
    return found.length === 1 ? found[0]._id : null;
  }

  private async defaultConnection(organization: string, integrationId: string): Promise<string | null> {
    const filter = { organization, integrationId, isDefault: true, scope: 'organization' };
    const found = await this.readStore.collection<ConnectionDocument>(CONNECTIONS).findOne(filter);
    return found?._id ?? null;
  }

  private async connectorState(organization: string, connectionId: string): Promise<ConnectorState> {
    const events = await this.eventStore.readStream(connectorStream(organization, connectionId));
    const state = foldEvents(connectorDecider, events.map(toDomainEvent) as ConnectorEvent[]);
    return state.status !== 'absent' && state.organization !== organization ? { status: 'absent' } : state;
  }
}

/** Never lets a parser's message quote the plaintext. */
function parseValues(plaintext: string): Record<string, string> {
  try {
    return JSON.parse(plaintext) as Record<string, string>;
  } catch {
    throw new SecretUnreadable('The connection values are not a JSON object.');
  }
}

/**
 * TrialSecrets over these stores, with a key ring of its own: for what runs outside the
 * server's container (tools, tests). The server's comes from ConnectorsModule.
 */
export function createTrialSecrets(source: KeyRingSource & { readStore: ReadStore; logger: JsonLogger }, clock: Clock = systemClock): TrialSecrets {
  const keyRing = openKeyRing(source);
  return new TrialSecrets(environmentValues(source.eventStore, keyRing), source.eventStore, source.readStore, keyRing, source.logger, clock);
}
