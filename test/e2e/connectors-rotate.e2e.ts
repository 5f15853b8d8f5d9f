import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { SecretUnreadable } from '#infrastructure/secrets/aes-gcm';
import { dataKeyStream } from '#infrastructure/secrets/data-key.decider';
import { masterKeyId, masterKeyPath } from '#infrastructure/secrets/master-key';
import { createTrialSecrets } from '#modules/connectors/trial-secrets';
import type { VariantDefinition } from '#shared/eval-definitions';
import { EVENT_LOG_FILE } from '../../src/runtime';
import { CLI, INIT_KEY, startInProcess, tempDir } from '../support/servers';

const API_KEY = 'sk-rotate-test-5e5e5e5e5e5e5e5e';
const TOKEN = 'rotate-token-6f6f6f6f6f6f6f6f';

function rotate(env: Record<string, string>): { status: number | null; output: string } {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does).`);
  const result = spawnSync(process.execPath, [CLI, 'keys', 'rotate-master'], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Opens the values the way a trial runner does, with the given master key, from the log alone. */
async function openValues(dataDir: string, masterKey: Buffer, connectionId: string): Promise<Record<string, string>> {
  const eventStore: EventStore = new SqliteEventStore(path.join(dataDir, EVENT_LOG_FILE));
  const readStore = new MemoryReadStore();
  try {
    const config = { ...loadConfig({ ASSAY_DATA_DIR: dataDir }), masterKey };
    const secrets = createTrialSecrets({ eventStore, readStore, config, logger: new JsonLogger('silent') });
    const variant: VariantDefinition = { harness: 'command', model: 'm', profile: null, sandbox: null, credentials: { harnessConnectionId: connectionId } };
    return (await secrets.resolve('acme', variant)).env;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
}

async function storeSecrets(env: Record<string, string>): Promise<{ connectionId: string }> {
  const server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ...env });
  try {
    const added = await server.client.call('connectors.add', {
      integrationId: 'harness_kind_1',
      authMethodId: 'api-key',
      name: 'h',
      values: { apiKey: API_KEY },
    });
    expect(added.status).toBe(200);
    expect((await server.client.call('environment.set', { variables: [{ name: 'TOKEN', value: TOKEN }] })).status).toBe(200);
    return { connectionId: added.body.id };
  } finally {
    await server.close();
  }
}

async function eventsOf(dataDir: string, stream: string): Promise<string[]> {
  const eventStore = new SqliteEventStore(path.join(dataDir, EVENT_LOG_FILE));
  try {
    return (await eventStore.readStream(stream)).map((event) => `${event.type}:${JSON.stringify(event.data)}`);
  } finally {
    await eventStore.close();
  }
}

describe('assay keys rotate-master', () => {
  it('re-wraps the data keys in the key file mode: values open with the new key only, and are not re-encrypted', async () => {
    const dataDir = tempDir();
    const { connectionId } = await storeSecrets({ ASSAY_DATA_DIR: dataDir });
    const oldKey = Buffer.from(fs.readFileSync(masterKeyPath(dataDir), 'utf8').trim(), 'base64');
    const connectorBefore = await eventsOf(dataDir, `connector-acme.${connectionId}`);
    const environmentBefore = await eventsOf(dataDir, 'environment-acme');

    const result = rotate({ ASSAY_DATA_DIR: dataDir });
    expect(result).toEqual({ status: 0, output: expect.stringContaining('Re-wrapped 1 data keys (0 already done) of 1 organizations') });
    const newKey = Buffer.from(fs.readFileSync(masterKeyPath(dataDir), 'utf8').trim(), 'base64');
    expect(newKey.equals(oldKey)).toBe(false);
    expect(fs.statSync(masterKeyPath(dataDir)).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(`${masterKeyPath(dataDir)}.next`)).toBe(false);
    expect(result.output).not.toContain(newKey.toString('base64'));
    expect(result.output).toContain('Kept 1 audit chain keys');

    expect(await eventsOf(dataDir, `connector-acme.${connectionId}`)).toEqual(connectorBefore);
    expect(await eventsOf(dataDir, 'environment-acme')).toEqual(environmentBefore);
    const keyEvents = await eventsOf(dataDir, dataKeyStream('acme'));
    expect(keyEvents.map((event) => event.split(':')[0])).toEqual(['DataKeyCreated', 'DataKeyRewrapped']);
    expect(keyEvents[1]).toContain(masterKeyId(newKey));

    expect(await openValues(dataDir, newKey, connectionId)).toEqual({ TOKEN, ASSAY_HARNESS_API_KEY: API_KEY });
    await expect(openValues(dataDir, oldKey, connectionId)).rejects.toThrow(SecretUnreadable);

    // The server starts again on the new key file and keeps working.
    const server = await startInProcess({ ASSAY_DATA_DIR: dataDir, ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    try {
      expect((await server.client.call('environment.set', { variables: [{ name: 'AFTER', value: 'after-rotation' }] })).status).toBe(200);
      const env = await createTrialSecrets(server.runtime).resolve('acme', {
        harness: 'command',
        model: 'm',
        profile: null,
        sandbox: null,
        credentials: { harnessConnectionId: connectionId },
      });
      expect(env.env).toEqual({ TOKEN, AFTER: 'after-rotation', ASSAY_HARNESS_API_KEY: API_KEY });
      // The audit chain spans both master keys' chain keys, and every link of it verifies.
      const verified = await server.client.call('audit.verify', {});
      expect(verified.body).toMatchObject({ ok: true, unchained: 0, firstBreak: null });
      const listed = await server.client.call('audit.events.list', { limit: 1000 });
      const keyIds = new Set(listed.body.events.map((event: { chain: { hash: string } }) => event.chain.hash.split('.')[0]));
      expect(keyIds.size).toBe(2);
      expect(verified.body.checked).toBe(listed.body.events.length);
    } finally {
      await server.close();
    }
  });

  it('takes the new key from ASSAY_NEW_MASTER_KEY when ASSAY_MASTER_KEY is set, and needs it', async () => {
    const dataDir = tempDir();
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const { connectionId } = await storeSecrets({ ASSAY_DATA_DIR: dataDir, ASSAY_MASTER_KEY: oldKey.toString('base64') });
    expect(fs.existsSync(masterKeyPath(dataDir))).toBe(false);

    const refused = rotate({ ASSAY_DATA_DIR: dataDir, ASSAY_MASTER_KEY: oldKey.toString('base64') });
    expect(refused.status).toBe(1);
    expect(refused.output).toContain('ASSAY_NEW_MASTER_KEY');

    const env = { ASSAY_DATA_DIR: dataDir, ASSAY_MASTER_KEY: oldKey.toString('base64'), ASSAY_NEW_MASTER_KEY: newKey.toString('base64') };
    expect(rotate(env)).toEqual({ status: 0, output: expect.stringContaining('Set ASSAY_MASTER_KEY') });
    expect(await openValues(dataDir, newKey, connectionId)).toEqual({ TOKEN, ASSAY_HARNESS_API_KEY: API_KEY });
    await expect(openValues(dataDir, oldKey, connectionId)).rejects.toThrow(SecretUnreadable);
    // Run again with the same pair: nothing left to re-wrap.
    expect(rotate(env).output).toContain('Re-wrapped 0 data keys (1 already done)');
  });
});
