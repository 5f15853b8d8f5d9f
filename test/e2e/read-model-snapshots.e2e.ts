import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoadedSnapshot, readSnapshot, SNAPSHOT_FILE, SNAPSHOT_VERSION } from '#infrastructure/read-store/memory/read-model-snapshot';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { loadConfig } from '../../src/config';
import { snapshotInterval } from '#infrastructure/processing/read-model-snapshots';
import { snapshotSettings } from '../../src/runtime';
import { rebuildFromLog, snapshot } from '../support/read-models';
import { CLI, INIT_KEY, InProcessServer, startInProcess, tempDir, waitUntil } from '../support/servers';

const SECRET_VARIABLE = 'snapshot-secret-variable-7f3a9c21e5';
const SECRET_CONNECTION = 'sk-snapshot-connection-key-0c94b2d8';
const env = (dataDir: string) => ({ ASSAY_DATA_DIR: dataDir, ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_SNAPSHOT_EVERY: '20' });

/** What a client reads: the answers of the list operations over what the test wrote. */
async function reads(server: InProcessServer): Promise<unknown[]> {
  const answers = [];
  for (const [operation, body] of [
    ['auth.keys.list', {}],
    ['environment.list', {}],
    ['connectors.list', {}],
  ] as const) {
    const answer = await server.client.call(operation, body);
    expect(answer.status).toBe(200);
    answers.push(answer.body);
  }
  return answers;
}

function logged(server: InProcessServer, message: string): Array<Record<string, unknown>> {
  return server.logs.entries().filter((line) => line.msg === message);
}

describe('read-model snapshots of the embedded store', () => {
  let dataDir: string;
  let before: unknown[];
  let headAtStop: number;
  /** A periodic snapshot taken while serving, before the last writes: what a crash would leave. */
  let periodic: Buffer;

  beforeAll(async () => {
    dataDir = tempDir();
    const server = await startInProcess(env(dataDir));
    try {
      const api = server.client;
      await api.call('environment.set', { variables: [{ name: 'TOKEN', value: SECRET_VARIABLE }] });
      await api.call('connectors.add', {
        integrationId: 'openai-compatible',
        authMethodId: 'api-key',
        name: 'named',
        values: { apiKey: SECRET_CONNECTION, baseUrl: 'https://models.example' },
      });
      for (let index = 0; index < 30; index += 1) {
        const created = await api.call('auth.keys.create', { name: `k${index}`, permissions: ['evals:read'] });
        if (index % 3 === 0) await api.call('auth.keys.revoke', { id: created.body.id });
      }
      await waitUntil(async () => logged(server, 'read-model snapshot written').length > 0, 10000);
      periodic = fs.readFileSync(path.join(dataDir, SNAPSHOT_FILE));
      for (let index = 0; index < 5; index += 1) await api.call('auth.keys.create', { name: `late${index}`, permissions: ['evals:read'] });
      before = await reads(server);
      headAtStop = await server.runtime.eventStore.headPosition();
    } finally {
      await server.close();
    }
  });

  it('writes one at shutdown at the head of the log, and a restart loads it and replays nothing', async () => {
    const server = await startInProcess(env(dataDir));
    try {
      const [loaded] = logged(server, 'read models loaded from a snapshot');
      expect(loaded).toMatchObject({ position: headAtStop });
      expect(logged(server, 'read models caught up')[0]).toMatchObject({ events: 0, position: headAtStop });
      expect(await reads(server)).toEqual(before);
      expect(await snapshot(server.runtime.readStore)).toEqual(await snapshot(await rebuildFromLog(server.runtime.eventStore)));
    } finally {
      await server.close();
    }
  });

  it('after a crash, loads the last periodic snapshot and replays only the tail', async () => {
    fs.writeFileSync(path.join(dataDir, SNAPSHOT_FILE), periodic);
    const server = await startInProcess(env(dataDir));
    try {
      const [loaded] = logged(server, 'read models loaded from a snapshot');
      const position = loaded.position as number;
      expect(position).toBeLessThan(headAtStop);
      const head = await server.runtime.eventStore.headPosition();
      // Only the events after the snapshot were applied: the tail, not the log.
      expect(logged(server, 'read models caught up')[0]).toMatchObject({ events: head - position, position: head });
      expect(await reads(server)).toEqual(before);
      expect(await snapshot(server.runtime.readStore)).toEqual(await snapshot(await rebuildFromLog(server.runtime.eventStore)));
    } finally {
      await server.close();
    }
  });

  it('ignores a damaged snapshot with a warning and replays the whole log', async () => {
    const file = path.join(dataDir, SNAPSHOT_FILE);
    const damaged = fs.readFileSync(file);
    damaged[Math.floor(damaged.length / 2)] ^= 0x20;
    fs.writeFileSync(file, damaged);
    const server = await startInProcess(env(dataDir));
    try {
      expect(logged(server, 'read models loaded from a snapshot')).toHaveLength(0);
      expect(logged(server, 'read-model snapshot ignored; replaying the whole event log')[0]).toMatchObject({ reason: 'damaged: its checksum does not match' });
      const head = await server.runtime.eventStore.headPosition();
      expect(logged(server, 'read models caught up')[0]).toMatchObject({ events: head, position: head });
      expect(await reads(server)).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it('ignores a snapshot of another format version', async () => {
    const file = path.join(dataDir, SNAPSHOT_FILE);
    const text = fs.readFileSync(file, 'utf8').replace(`"version":${SNAPSHOT_VERSION},`, '"version":99,');
    fs.writeFileSync(file, text);
    const server = await startInProcess(env(dataDir));
    try {
      expect(logged(server, 'read-model snapshot ignored; replaying the whole event log')[0]).toMatchObject({
        reason: `format version 99, this release reads ${SNAPSHOT_VERSION}`,
      });
      expect(await reads(server)).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it('ignores a complete, valid snapshot of format version 1 (documents as objects) with a warning, not a crash', async () => {
    const file = path.join(dataDir, SNAPSHOT_FILE);
    const current = await readSnapshot(file, snapshotSettings(loadConfig({ ASSAY_DATA_DIR: dataDir })).fingerprint);
    fs.writeFileSync(file, versionOneSnapshot(current));
    const server = await startInProcess(env(dataDir));
    try {
      expect(logged(server, 'read-model snapshot ignored; replaying the whole event log')[0]).toMatchObject({
        reason: `format version 1, this release reads ${SNAPSHOT_VERSION}`,
      });
      expect(logged(server, 'read models loaded from a snapshot')).toHaveLength(0);
      expect(await reads(server)).toEqual(before);
    } finally {
      await server.close();
    }
    // The stop wrote the current version in its place.
    expect((await readSnapshot(file, snapshotSettings(loadConfig({ ASSAY_DATA_DIR: dataDir })).fingerprint))?.position).toBe(current?.position);
  });

  it('says how many documents each snapshot wrote and after how many events the next is due', async () => {
    const server = await startInProcess(env(dataDir));
    try {
      for (let index = 0; index < 25; index += 1) await server.client.call('auth.keys.create', { name: `more${index}`, permissions: ['evals:read'] });
      await waitUntil(async () => logged(server, 'read-model snapshot written').length > 0, 10000);
      const [written] = logged(server, 'read-model snapshot written');
      expect(written.documents).toBeGreaterThan(0);
      // A small state: every ASSAY_SNAPSHOT_EVERY events (a large one less often: src/infrastructure/processing/read-model-snapshots.spec.ts).
      expect(written.nextAfterEvents).toBe(snapshotInterval(20, written.documents as number));
      expect(written.nextAfterEvents).toBe(20);
    } finally {
      await server.close();
    }
  });

  it('with ASSAY_SNAPSHOT_EVERY=0 writes none, loads none, and replays the log', async () => {
    const file = path.join(dataDir, SNAPSHOT_FILE);
    const kept = fs.readFileSync(file);
    const server = await startInProcess({ ...env(dataDir), ASSAY_SNAPSHOT_EVERY: '0' });
    try {
      expect(logged(server, 'read models loaded from a snapshot')).toHaveLength(0);
      for (let index = 0; index < 10; index += 1) await server.client.call('auth.keys.create', { name: `off${index}`, permissions: ['evals:read'] });
      expect((await server.client.call('auth.keys.list', {})).status).toBe(200);
    } finally {
      await server.close();
    }
    expect(logged(server, 'read-model snapshot written')).toHaveLength(0);
    expect(fs.readFileSync(file).equals(kept)).toBe(true);
  });

  it('holds no secret value, in any encoding a reader could search for', () => {
    const files = [fs.readFileSync(path.join(dataDir, SNAPSHOT_FILE)), periodic];
    for (const content of files) {
      expect(content.length).toBeGreaterThan(0);
      for (const secret of [SECRET_VARIABLE, SECRET_CONNECTION]) {
        for (const form of [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex')]) {
          expect(content.includes(form)).toBe(false);
        }
      }
    }
    expect(fs.statSync(path.join(dataDir, SNAPSHOT_FILE)).mode & 0o077).toBe(0);
  });
});

/**
 * The file the first release wrote (format version 1): JSON lines of a header, chunks of
 * documents as objects (`{c, d}`) and the trailer's sha256, with what `snapshot` holds.
 */
function versionOneSnapshot(snapshot: LoadedSnapshot | null): string {
  if (!snapshot) throw new Error('No snapshot to rewrite.');
  const { position, eventId, fingerprint, collections } = snapshot;
  const lines = [
    JSON.stringify({
      format: 'assay-read-models',
      version: 1,
      position,
      eventId,
      fingerprint,
      createdAt: new Date().toISOString(),
      collections: collections.map(({ name, documents }) => ({ name, documents: documents.length })),
    }),
    ...collections.filter(({ documents }) => documents.length > 0).map(({ name, documents }) => JSON.stringify({ c: name, d: documents })),
  ];
  const body = lines.map((line) => `${line}\n`).join('');
  return `${body}${JSON.stringify({ end: true, sha256: createHash('sha256').update(body).digest('hex') })}\n`;
}

/** `assay projections rebuild` as a child process: its exit code and standard error. */
function rebuild(dataDir: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'projections', 'rebuild'], {
      env: { PATH: process.env.PATH ?? '', ASSAY_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('assay projections rebuild on the embedded store, while a server runs', () => {
  it('writes a snapshot built from the whole log, and the running server keeps answering', async () => {
    const dataDir = tempDir();
    const server = await startInProcess({ ASSAY_DATA_DIR: dataDir, ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    try {
      for (let index = 0; index < 10; index += 1) await server.client.call('auth.keys.create', { name: `k${index}`, permissions: ['evals:read'] });
      const listed = (await server.client.call('auth.keys.list', {})).body;
      const head = await server.runtime.eventStore.headPosition();
      const result = await rebuild(dataDir);
      expect(result).toMatchObject({ code: 0 });
      expect(result.stderr).toContain('rebuilt read models written as the snapshot');
      expect((await server.client.call('auth.keys.list', {})).body).toEqual(listed);

      const config = loadConfig({ ASSAY_DATA_DIR: dataDir });
      const written = await readSnapshot(path.join(dataDir, SNAPSHOT_FILE), snapshotSettings(config).fingerprint);
      expect(written?.position).toBe(head);
      const fromSnapshot = new MemoryReadStore();
      fromSnapshot.restore(written?.collections ?? []);
      expect(await snapshot(fromSnapshot)).toEqual(await snapshot(await rebuildFromLog(server.runtime.eventStore)));
    } finally {
      await server.close();
    }
  });
});
