/**
 * Two `assay serve` processes on one SQLite log and one MongoDB read store, and
 * `assay projections rebuild` run beside them: on a real MongoDB only (MONGODB_URL), since the
 * election's lease and the rebuild's swap need what FerretDB v1 lacks.
 */
import { spawn } from 'node:child_process';
import { loadConfig } from '../../src/config';
import { openEventStore } from '../../src/runtime';
import { databaseFromUrl, MongoReadStore } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import { rebuildFromLog, snapshot } from '../support/read-models';
import { mongoTargets, withDatabase } from '../support/mongodb-targets';
import { ChildServer, CLI, INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';

const url =
  mongoTargets('Two instances on one MongoDB read store', ['atomicConditionalUpdates', 'renameWithDropTarget']).length > 0
    ? process.env.MONGODB_URL
    : undefined;
const LEASE_MS = '1500';

function rebuild(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'projections', 'rebuild'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

async function ready(server: ChildServer): Promise<{ status: string; role?: string }> {
  return (await (await fetch(`${server.url}/ready`)).json()) as { status: string; role?: string };
}

if (url) {
  describe('two instances on one MongoDB read store', () => {
    const database = `${(databaseFromUrl(url) ?? 'assay_test').slice(0, 30)}_inst_${process.pid}_${Date.now().toString(36)}`.slice(0, 60);
    let dataDir: string;
    let a: ChildServer;
    let b: ChildServer;
    let store: MongoReadStore;

    beforeAll(async () => {
      dataDir = tempDir();
      const env = {
        ASSAY_DATA_DIR: dataDir,
        MONGODB_URL: withDatabase(url, database),
        ASSAY_INIT_ORG: 'acme',
        ASSAY_INIT_API_KEY: INIT_KEY,
        ASSAY_PROJECTION_LEASE_MS: LEASE_MS,
      };
      a = await startChild({ ...env, ASSAY_INSTANCE_ID: 'instance-a' });
      b = await startChild({ ...env, ASSAY_INSTANCE_ID: 'instance-b' });
      store = await MongoReadStore.connect(url, database);
    }, 60_000);

    afterAll(async () => {
      await a.stop();
      await b.stop();
      await store.dropAll();
      await store.close();
    });

    it('elects one owner; a write through the follower is readable there at once, and a revocation holds on both', async () => {
      await waitUntil(async () => (await ready(a)).status === 'ready' && (await ready(b)).status === 'ready', 10_000);
      expect([(await ready(a)).role, (await ready(b)).role]).toEqual(['owner', 'follower']);
      for (let index = 0; index < 5; index += 1) {
        const created = await b.client.call('auth.keys.create', { name: `k${index}`, permissions: ['evals:read'] });
        const listed = await b.client.call('auth.keys.list');
        expect(listed.body.keys.map((key: { id: string }) => key.id)).toContain(created.body.id);
        expect((await a.client.withKey(created.body.key).call('auth.whoami')).status).toBe(200);
        expect((await b.client.call('auth.keys.revoke', { id: created.body.id })).body).toEqual({ ok: true });
        expect((await b.client.withKey(created.body.key).call('auth.whoami')).status).toBe(401);
        await waitUntil(async () => (await a.client.withKey(created.body.key).call('auth.whoami')).status === 401, 5_000);
      }
      expect(b.output()).toContain('projection role: follower');
    });

    it('rebuilds into new collections and swaps them in while both serve; reads never fail and the owner goes on', async () => {
      const before = (await b.client.call('auth.keys.list')).body;
      const activity = { busy: true };
      const failures: number[] = [];
      const reader = (async () => {
        while (activity.busy) {
          const answer = await b.client.call('auth.keys.list');
          if (answer.status !== 200 || answer.body.keys.length < before.keys.length) failures.push(answer.status);
        }
      })();
      const result = await rebuild({ ASSAY_DATA_DIR: dataDir, MONGODB_URL: withDatabase(url, database), ASSAY_PROJECTION_LEASE_MS: LEASE_MS });
      activity.busy = false;
      await reader;
      expect(result).toMatchObject({ code: 0 });
      expect(result.output).toContain('rebuilt read models swapped in');
      expect(failures).toEqual([]);
      expect((await store.collectionNames()).filter((name) => name.includes('__rebuild_'))).toEqual([]);

      const created = await a.client.call('auth.keys.create', { name: 'after-rebuild', permissions: ['evals:read'] });
      expect((await b.client.call('auth.keys.list')).body.keys.map((key: { id: string }) => key.id)).toContain(created.body.id);
      const eventStore = await openEventStore(loadConfig({ ASSAY_DATA_DIR: dataDir }));
      try {
        const rebuilt = await rebuildFromLog(eventStore);
        const names = await rebuilt.collectionNames();
        expect(await snapshot(store, names)).toEqual(await snapshot(rebuilt, names));
      } finally {
        await eventStore.close();
      }
    });

    it('hands the log to the follower when the owner stops', async () => {
      const owner = (await ready(a)).role === 'owner' ? a : b;
      const other = owner === a ? b : a;
      await owner.stop();
      await waitUntil(async () => (await ready(other)).role === 'owner', 5_000);
      const created = await other.client.call('auth.keys.create', { name: 'after-handover', permissions: ['evals:read'] });
      expect((await other.client.call('auth.keys.list')).body.keys.map((key: { id: string }) => key.id)).toContain(created.body.id);
    });
  });
} else {
  describe('two instances on one MongoDB read store', () => {
    it.skip('needs MONGODB_URL', () => undefined);
  });
}
