import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { CLI, ChildServer, INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';

const run = promisify(execFile);

/** The compiled service as separate processes: what `npm start` and `npx assay` run. */
describe('durability and the CLI, with the server as a child process', () => {
  let dataDir: string;
  let server: ChildServer | null = null;
  const env = () => ({ ASSAY_DATA_DIR: dataDir, ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });

  beforeEach(() => {
    dataDir = tempDir();
  });

  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = null;
  });

  it('a key from `assay keys create` is accepted by the running server', async () => {
    server = await startChild(env());
    const { stdout } = await run(process.execPath, [CLI, 'keys', 'create', '--org', 'acme', '--permissions', 'evals:read,prompts:read', '--name', 'ci'], {
      env: { PATH: process.env.PATH ?? '', ASSAY_DATA_DIR: dataDir },
    });
    const key = stdout.trim().split('\n').pop()!;
    expect(key).toMatch(/^assay_/);
    const client = server.client.withKey(key);
    // The server sees the other process's append by polling the shared SQLite file.
    await waitUntil(async () => (await client.call('auth.whoami')).status === 200, 5000, 25);
    const whoami = await client.call('auth.whoami');
    expect(whoami.body).toMatchObject({ organization: 'acme', name: 'ci', permissions: ['evals:read', 'prompts:read'] });
  });

  it('refuses bad CLI input with a message and a non-zero exit', async () => {
    const failure = await run(process.execPath, [CLI, 'keys', 'create', '--org', 'acme', '--permissions', 'evals:fly'], {
      env: { PATH: process.env.PATH ?? '', ASSAY_DATA_DIR: dataDir },
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 64 });
    expect((failure as { stderr: string }).stderr).toContain('unknown: evals:fly');
  });

  it('keeps every acknowledged write through SIGKILL, and rebuilds the same read models', async () => {
    server = await startChild(env());
    const admin = server.client;
    const created: Array<{ id: string; key: string }> = [];
    for (let index = 0; index < 12; index += 1) {
      const answer = await admin.call('auth.keys.create', { name: `key-${index}`, permissions: ['evals:read'] });
      expect(answer.status).toBe(200);
      created.push(answer.body);
    }
    for (const revoked of created.slice(0, 4)) {
      expect((await admin.call('auth.keys.revoke', { id: revoked.id })).status).toBe(200);
    }
    const before = (await admin.call('auth.keys.list')).body;
    expect(before.keys).toHaveLength(13);

    expect(await server.stop('SIGKILL')).toBeNull();
    server = null;

    const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
    const issued = db.prepare("SELECT count(*) AS n FROM events WHERE type = 'ApiKeyIssued'").get() as { n: number };
    const revoked = db.prepare("SELECT count(*) AS n FROM events WHERE type = 'ApiKeyRevoked'").get() as { n: number };
    db.close();
    expect(issued.n).toBe(13);
    expect(revoked.n).toBe(4);

    server = await startChild(env());
    const after = (await server.client.call('auth.keys.list')).body;
    expect(after).toEqual(before);
    expect((await server.client.withKey(created[0].key).call('auth.whoami')).status).toBe(401);
    expect((await server.client.withKey(created[11].key).call('auth.whoami')).status).toBe(200);
  });

  it('restarting with the same bootstrap variables changes nothing', async () => {
    server = await startChild(env());
    await server.stop('SIGTERM');
    server = await startChild(env());
    await server.stop('SIGTERM');
    server = null;
    const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
    const rows = db.prepare('SELECT type, count(*) AS n FROM events GROUP BY type ORDER BY type').all();
    db.close();
    expect(rows).toEqual([
      { type: 'ApiKeyIssued', n: 1 },
      { type: 'OrganizationCreated', n: 1 },
    ]);
  });

  it('shuts down gracefully on SIGTERM with exit code 0', async () => {
    server = await startChild(env());
    const code = await server.stop('SIGTERM');
    server = null;
    expect(code).toBe(0);
  });

  it('refuses to start with a bad variable and names it', async () => {
    const failure = await run(process.execPath, [CLI, 'serve'], {
      env: { PATH: process.env.PATH ?? '', ASSAY_DATA_DIR: dataDir, PORT: 'eighty' },
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toContain('PORT');
  });
});
