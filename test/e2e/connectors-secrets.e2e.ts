import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { SecretUnreadable } from '#infrastructure/secrets/aes-gcm';
import { connectionProjection, CONNECTIONS } from '#modules/connectors/connection.projection';
import { connectorStream } from '#modules/connectors/connector.events';
import { createTrialSecrets, TrialCredentialsUnavailable, TrialSecrets } from '#modules/connectors/trial-secrets';
import type { VariantDefinition } from '#shared/eval-definitions';
import { environmentStream } from '#modules/environment/environment.events';
import { ENVIRONMENT_VARIABLES, environmentProjection } from '#modules/environment/environment.projection';
import { EVENT_LOG_FILE } from '../../src/runtime';
import { ApiClient } from '../support/http-client';
import { filesUnder, INIT_KEY, InProcessServer, keyFor, startInProcess } from '../support/servers';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Distinctive values: a hit in any store can only be a leak. */
const SECRETS = {
  variable: 'var-secret-7f3a9c1e5b2d4f60',
  shortVariable: 'short-7f3a9c',
  harnessKey: 'sk-harness-default-c0ffee1234567890',
  harnessUrl: 'https://gateway-c0ffee.internal/v1',
  namedKey: 'sk-named-connection-deadbeef0987',
  namedUrl: 'https://named-deadbeef.internal/v1',
  sandboxToken: 'sbx-token-feedface13579bdf',
  sandboxRegion: 'region-feedface-eu',
  replacedVariable: 'var-replaced-0a1b2c3d4e5f6071',
  removedVariable: 'var-removed-99aa88bb77cc66dd',
  removedConnection: 'sk-removed-connection-abcabc123',
  personalKey: 'sk-personal-0badc0de0badc0de',
};

const variant = (overrides: Partial<VariantDefinition> = {}): VariantDefinition => ({
  harness: 'harness_kind_1',
  model: 'm',
  profile: null,
  sandbox: 'sandbox_kind_2',
  credentials: null,
  ...overrides,
});

/** Each secret as stored text might carry it: as is, JSON-escaped, in base64 and in hex. */
function encodings(secret: string): Buffer[] {
  const utf8 = Buffer.from(secret, 'utf8');
  return [utf8, Buffer.from(utf8.toString('base64')), Buffer.from(utf8.toString('base64url')), Buffer.from(utf8.toString('hex'))];
}

describe('secrets: given to trials, found nowhere else', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let secrets: TrialSecrets;
  const answers: string[] = [];
  const ids: Record<string, string> = {};

  const call = async (operation: string, body: unknown, client = api) => {
    const answer = await client.call(operation, body);
    answers.push(answer.text);
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const connect = async (integrationId: string, name: string, values: Record<string, string>, extra: Record<string, unknown> = {}) => {
    const authMethodId = integrationId.startsWith('sandbox') ? 'api-token' : 'api-key';
    return (await call('connectors.add', { integrationId, authMethodId, name, values, ...extra })).id as string;
  };

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    secrets = createTrialSecrets(server.runtime);
    await call('environment.set', {
      variables: [
        { name: 'SECRET_TOKEN', value: SECRETS.variable },
        { name: 'SHORT_SECRET', value: SECRETS.shortVariable, secret: true },
        { name: 'PLAIN_SETTING', value: 'plain-value', secret: false },
        { name: 'REPLACED', value: SECRETS.replacedVariable },
        { name: 'REMOVED', value: SECRETS.removedVariable },
      ],
    });
    await call('environment.set', { variables: [{ name: 'REPLACED', value: 'replacement-value-000000' }] });
    await call('environment.remove', { name: 'REMOVED' });
    ids.harness = await connect('harness_kind_1', 'default harness', { apiKey: SECRETS.harnessKey, baseUrl: SECRETS.harnessUrl }, { isDefault: true });
    ids.named = await connect('openai-compatible', 'named', { apiKey: SECRETS.namedKey, baseUrl: SECRETS.namedUrl });
    ids.sandbox = await connect('sandbox_kind_2', 'default sandbox', { token: SECRETS.sandboxToken, region: SECRETS.sandboxRegion }, { isDefault: true });
    ids.removed = await connect('harness_kind_4', 'removed', { apiKey: SECRETS.removedConnection }, { isDefault: true });
    await call('connectors.remove', { id: ids.removed });
    await call('connectors.list', {});
    await call('environment.list', {});
  });

  afterAll(() => server.close());

  it("gives a trial the organization's variables and the default connections of its harness and sandbox kinds", async () => {
    const resolved = await secrets.resolve('acme', variant());
    expect(resolved.env).toEqual({
      SECRET_TOKEN: SECRETS.variable,
      SHORT_SECRET: SECRETS.shortVariable,
      PLAIN_SETTING: 'plain-value',
      REPLACED: 'replacement-value-000000',
      ASSAY_HARNESS_API_KEY: SECRETS.harnessKey,
      ASSAY_HARNESS_BASE_URL: SECRETS.harnessUrl,
      ASSAY_SANDBOX_TOKEN: SECRETS.sandboxToken,
      ASSAY_SANDBOX_REGION: SECRETS.sandboxRegion,
    });
    expect([...resolved.secrets].sort()).toEqual(
      [SECRETS.variable, SECRETS.shortVariable, 'replacement-value-000000', SECRETS.harnessKey, SECRETS.sandboxToken].sort(),
    );
    expect(resolved.connectionIds).toEqual([ids.harness, ids.sandbox]);
    expect(resolved.variableNames!.sort()).toEqual(['PLAIN_SETTING', 'REPLACED', 'SECRET_TOKEN', 'SHORT_SECRET']);
  });

  it('uses the connection the variant names over the default, and none for a kind without a default', async () => {
    const named = await secrets.resolve('acme', variant({ harness: 'command', sandbox: null, credentials: { harnessConnectionId: ids.named } }));
    expect(named.env.ASSAY_HARNESS_API_KEY).toBe(SECRETS.namedKey);
    expect(named.env.ASSAY_HARNESS_BASE_URL).toBe(SECRETS.namedUrl);
    expect(named.env.ASSAY_SANDBOX_TOKEN).toBeUndefined();
    expect(named.connectionIds).toEqual([ids.named]);
    const none = await secrets.resolve('acme', variant({ harness: 'harness_kind_4', sandbox: 'sandbox_kind_1' }));
    expect(Object.keys(none.env).filter((name) => name.startsWith('ASSAY_'))).toEqual([]);
  });

  it("refuses a named connection that was removed, does not exist, or is another organization's", async () => {
    await expect(secrets.resolve('acme', variant({ credentials: { harnessConnectionId: ids.removed } }))).rejects.toThrow(TrialCredentialsUnavailable);
    await expect(secrets.resolve('acme', variant({ credentials: { sandboxConnectionId: 'con_nope' } }))).rejects.toThrow(TrialCredentialsUnavailable);
    await keyFor(server, 'globex', ['connectors:read']);
    await expect(secrets.resolve('globex', variant({ credentials: { harnessConnectionId: ids.named } }))).rejects.toThrow(TrialCredentialsUnavailable);
    expect(await secrets.resolve('globex', variant())).toMatchObject({ env: {}, secrets: [] });
  });

  it("gives a personal connection only to its owner's trials", async () => {
    const personal = await connect('openai-compatible', 'mine', { apiKey: SECRETS.personalKey, baseUrl: 'https://mine.example' }, { scope: 'personal' });
    const owner = (await call('auth.whoami', {})).keyId as string;
    const named = variant({ harness: 'command', sandbox: null, credentials: { harnessConnectionId: personal } });
    expect((await secrets.resolve('acme', named, owner)).env.ASSAY_HARNESS_API_KEY).toBe(SECRETS.personalKey);
    await expect(secrets.resolve('acme', named, 'key_someone_else')).rejects.toThrow(TrialCredentialsUnavailable);
    await expect(secrets.resolve('acme', named)).rejects.toThrow(/personal/);
  });

  it('records each use (lastUsedAt) and marks a connection invalid when a trial fails to authenticate', async () => {
    await secrets.recordUse('acme', [ids.harness, ids.sandbox], { authFailed: false, trialId: 'trl_1', variableNames: ['SECRET_TOKEN'] });
    let connections = new Map<string, any>((await call('connectors.list', {})).map((c: any) => [c.id, c]));
    expect(connections.get(ids.harness)).toMatchObject({ status: 'active', lastUsedAt: expect.stringMatching(ISO) });
    const variables = new Map<string, any>((await call('environment.list', {})).map((v: any) => [v.name, v]));
    expect(variables.get('SECRET_TOKEN').lastUsedAt).toMatch(ISO);
    expect(variables.get('PLAIN_SETTING').lastUsedAt).toBeNull();
    await secrets.recordUse('acme', [ids.harness, ids.removed, 'con_unknown'], { authFailed: true, trialId: 'trl_2' });
    connections = new Map((await call('connectors.list', {})).map((c: any) => [c.id, c]));
    expect(connections.get(ids.harness).status).toBe('invalid');
    expect(connections.get(ids.sandbox).status).toBe('active');
    // A replaced variable keeps its lastUsedAt.
    const [replaced] = await call('environment.set', { variables: [{ name: 'SECRET_TOKEN', value: SECRETS.variable }] });
    expect(replaced).toMatchObject({ revision: 2, lastUsedAt: variables.get('SECRET_TOKEN').lastUsedAt });
  });

  it("does not decrypt a ciphertext moved to another organization's connection or variable", async () => {
    const globex = await keyFor(server, 'initech', ['environment:write', 'connectors:write']);
    await call('environment.set', { variables: [{ name: 'OWN', value: 'initech-own-value' }] }, globex);
    const [added] = await server.runtime.eventStore.readStream(connectorStream('acme', ids.named));
    const metadata = { ...added.metadata, organization: 'initech' };
    const moved = { id: globalThis.crypto.randomUUID(), type: added.type, data: { ...(added.data as object), organization: 'initech' }, metadata };
    await server.runtime.eventStore.append(connectorStream('initech', ids.named), [moved], 'no_stream');
    await expect(secrets.resolve('initech', variant({ credentials: { harnessConnectionId: ids.named } }))).rejects.toThrow(SecretUnreadable);

    const acmeSet = (await server.runtime.eventStore.readStream(environmentStream('acme'))).find((event) => event.type === 'EnvironmentVariableSet')!;
    const initech = await server.runtime.eventStore.readStream(environmentStream('initech'));
    const copied = { id: globalThis.crypto.randomUUID(), type: acmeSet.type, data: { ...(acmeSet.data as object), organization: 'initech' }, metadata };
    await server.runtime.eventStore.append(environmentStream('initech'), [copied], initech[initech.length - 1].revision);
    await expect(secrets.resolve('initech', variant())).rejects.toThrow(SecretUnreadable);
  });

  it('rebuilds the same connection and variable documents from the log, even when every event comes twice', async () => {
    const events = await server.runtime.eventStore.readAll();
    const rebuilt = new MemoryReadStore();
    for (const pass of [1, 2]) {
      for (const event of events) {
        for (const projection of [connectionProjection, environmentProjection]) {
          if (projection.eventTypes.includes(event.type)) await projection.project(pass === 1 ? event : { ...event }, rebuilt);
        }
      }
    }
    for (const collection of [CONNECTIONS, ENVIRONMENT_VARIABLES]) {
      const live = await server.runtime.readStore.collection(collection).find({}, { sort: { _id: 1 } });
      expect(await rebuilt.collection(collection).find({}, { sort: { _id: 1 } })).toEqual(live);
      expect(live.length).toBeGreaterThanOrEqual(3);
    }
  });

  it('leaves no secret value in the event log, the artifact store, the read models, the logs or any answer', async () => {
    const values = Object.values(SECRETS);
    const files = filesUnder(server.dataDir);
    expect(files).toContain(path.join(server.dataDir, EVENT_LOG_FILE));
    for (const file of files) {
      const bytes = fs.readFileSync(file);
      for (const value of values)
        for (const encoded of encodings(value)) expect({ file, value, found: bytes.includes(encoded) }).toEqual({ file, value, found: false });
    }
    expect(filesUnder(path.join(server.dataDir, 'artifacts')).every((file) => files.includes(file))).toBe(true);
    // The control: the scan does see what is stored (a plain value's preview is in its event).
    expect(files.some((file) => fs.readFileSync(file).includes('plain-value'))).toBe(true);

    const database = new Database(path.join(server.dataDir, EVENT_LOG_FILE), { readonly: true, fileMustExist: true });
    const rows = database.prepare('SELECT stream, type, data, metadata FROM events').all() as Array<Record<string, string>>;
    database.close();
    const connectorRows = rows.filter((row) => row.type === 'ConnectorAdded');
    expect(connectorRows.length).toBeGreaterThanOrEqual(4);
    expect(connectorRows.every((row) => /"sealedValues":"v1\.dk_[0-9a-f]{16}\./.test(row.data))).toBe(true);
    const log = JSON.stringify(rows);
    for (const value of values) expect({ value, inEventLog: log.includes(value) }).toEqual({ value, inEventLog: false });

    const readModels: string[] = [];
    for (const name of await server.runtime.readStore.collectionNames()) {
      readModels.push(JSON.stringify(await server.runtime.readStore.collection(name).find({})));
    }
    expect(readModels.join('\n')).toContain('"preview":"plain-value"');
    expect(readModels.join('\n')).not.toContain('sealed');
    for (const value of values) expect({ value, inReadModels: readModels.join('\n').includes(value) }).toEqual({ value, inReadModels: false });

    const logs = server.logs.lines.join('\n');
    expect(server.logs.lines.length).toBeGreaterThan(10);
    for (const value of values) expect({ value, inLogs: logs.includes(value) }).toEqual({ value, inLogs: false });
    for (const value of values) expect({ value, inAnswers: answers.join('\n').includes(value) }).toEqual({ value, inAnswers: false });
  });
});
