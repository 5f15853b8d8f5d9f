import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startBody, waitForBatch } from '../support/evals';
import { ApiClient } from '../support/http-client';
import { filesUnder, INIT_KEY, InProcessServer, startInProcess } from '../support/servers';
import { tempDir } from '../support/temp-dirs';

const VARIABLE = 'trial-variable-secret-1d2e3f4a5b6c';
const API_KEY = 'sk-trial-connector-7a8b9c0d1e2f3a4b';
/** A harness whose driver says how to spot refused credentials in its output. */
const AUTH_CONFIG = `
allowUnsandboxed: true
repositories: { allowLocal: true, allowPrivateHosts: true }
harnesses:
  harness_kind_3:
    version: "1"
    run: "echo \\"error: 401 Unauthorized (key $ASSAY_HARNESS_API_KEY)\\"; exit 3"
    authFailure: "401 Unauthorized"
`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * A real trial: the `command` harness prints a secret variable and a connector value, and its
 * verify step proves it saw them (by hash: the secret never enters the batch definition).
 */
describe('trials get variables and connector values, and captures show [redacted]', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    const configPath = path.join(tempDir('assay-cfg-'), 'assay.yaml');
    fs.writeFileSync(configPath, AUTH_CONFIG);
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: configPath });
    api = server.client;
  });

  afterAll(() => server.close());

  it('runs a trial that sees both values in its environment while its trajectory shows [redacted]', async () => {
    const set = await api.call('environment.set', {
      variables: [
        { name: 'SECRET_TOKEN', value: VARIABLE },
        { name: 'PLAIN_SETTING', value: 'plain-visible', secret: false },
      ],
    });
    expect(set.status).toBe(200);
    const connection = await api.call('connectors.add', {
      integrationId: 'harness_kind_1',
      authMethodId: 'api-key',
      name: 'trial key',
      values: { apiKey: API_KEY },
    });
    expect(connection.status).toBe(200);

    const verify = [
      `test "$(printf %s "$SECRET_TOKEN" | sha256sum | cut -d' ' -f1)" = ${sha256(VARIABLE)}`,
      `test "$(printf %s "$ASSAY_HARNESS_API_KEY" | sha256sum | cut -d' ' -f1)" = ${sha256(API_KEY)}`,
      'grep -q done out.txt',
    ].join(' && ');
    const body = startBody({
      cases: [{ id: 'sees-secrets', variables: { word: 'x' }, verify }],
      variants: [
        {
          harness: 'command',
          model: 'none',
          credentials: { harnessConnectionId: connection.body.id },
          profile: { run: 'echo "token=$SECRET_TOKEN key=$ASSAY_HARNESS_API_KEY plain=$PLAIN_SETTING"; echo done > out.txt' },
        },
      ],
    });
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    const trial = batch.runs[0].trials[0];
    expect({ status: trial.status, failure: trial.failure }).toEqual({ status: 'passed', failure: null });
    const printed = trial.trajectory.map((entry: { output: string }) => entry.output).join('\n');
    expect(printed).toContain('token=[redacted] key=[redacted] plain=plain-visible');

    const runText = (await api.call('evals.runs.get', { id: batch.runs[0].id })).text;
    const stored = filesUnder(server.dataDir).map((file) => fs.readFileSync(file));
    const readModels: string[] = [];
    for (const name of await server.runtime.readStore.collectionNames()) {
      readModels.push(JSON.stringify(await server.runtime.readStore.collection(name).find({})));
    }
    for (const value of [VARIABLE, API_KEY]) {
      expect(JSON.stringify(batch).includes(value) || runText.includes(value)).toBe(false);
      expect(stored.some((bytes) => bytes.includes(value))).toBe(false);
      expect(readModels.join('\n').includes(value)).toBe(false);
      expect(server.logs.lines.join('\n').includes(value)).toBe(false);
    }
  });

  it('marks a connection invalid when a trial using it fails to authenticate, and records its use', async () => {
    const connection = await api.call('connectors.add', {
      integrationId: 'harness_kind_3',
      authMethodId: 'api-key',
      name: 'stale key',
      values: { apiKey: 'sk-stale-0000-1111-2222' },
      isDefault: true,
    });
    expect(connection.status).toBe(200);
    expect(connection.body).toMatchObject({ status: 'active', lastUsedAt: null });
    const started = await api.call(
      'evals.batches.start',
      startBody({ variants: [{ harness: 'harness_kind_3', model: 'm' }], cases: [{ id: 'auth', variables: { word: 'x' }, verify: 'true' }] }),
    );
    const batch = await waitForBatch(api, started.body.id);
    const trial = batch.runs[0].trials[0];
    expect(trial).toMatchObject({
      status: 'void',
      voidFields: ['credentials'],
      failure: 'harness_kind_3 could not authenticate: check the credentials of its connector',
    });
    expect(trial.trajectory.map((entry: { output: string }) => entry.output).join('')).toContain('(key [redacted])');
    const listed = (await api.call('connectors.list')).body.find((c: { id: string }) => c.id === connection.body.id);
    expect(listed.status).toBe('invalid');
    expect(listed.lastUsedAt).toEqual(expect.stringMatching(/^\d{4}-/));
  });

  it('voids a trial whose named connection does not exist', async () => {
    const body = startBody({ variants: [{ harness: 'command', model: 'm', credentials: { harnessConnectionId: 'con_missing' }, profile: { run: 'true' } }] });
    const batch = await waitForBatch(api, (await api.call('evals.batches.start', body)).body.id);
    expect(batch.runs[0].trials[0]).toMatchObject({ status: 'void', voidFields: ['credentials'] });
    expect(batch.runs[0].status).toBe('finished');
  });
});
