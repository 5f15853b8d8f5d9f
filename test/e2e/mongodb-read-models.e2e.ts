/**
 * The service with its read models in MongoDB, over the real driver and protocol: against the
 * server MONGODB_URL names, and against FerretDB started for this file. Batches, prompts and keys
 * go through the API; the documents MongoDB holds must be those a replay of the log makes in
 * memory, lists page the same, and a restart reads them back from MongoDB and goes on.
 */
import { startBody, waitForBatch } from '../support/evals';
import { mongoTargets, noTarget, ownDatabase } from '../support/mongodb-targets';
import { rebuildFromLog, snapshot } from '../support/read-models';
import { INIT_KEY, InProcessServer, startInProcess, tempDir } from '../support/servers';

function quickBody(caseId: string): Record<string, unknown> {
  return startBody({
    cases: [{ id: caseId, variables: { word: 'x' }, verify: 'true' }],
    variants: [{ harness: 'command', model: 'm', profile: { run: 'true' } }],
  });
}

const targets = mongoTargets('The service on a MongoDB read store');

for (const target of targets) {
  describe(`the service on a MongoDB read store: ${target.name}`, () => {
    let dataDir: string;
    let env: Record<string, string>;
    let server: InProcessServer;
    const batches: string[] = [];

    beforeAll(async () => {
      dataDir = tempDir();
      env = { ASSAY_DATA_DIR: dataDir, MONGODB_URL: target.url(ownDatabase('e2e')), ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY };
      server = await startInProcess(env);
      // Seven batches, at most three at a time (an organization's slots).
      for (const group of [3, 3, 1]) {
        const started = await Promise.all(Array.from({ length: group }, (_, index) => server.client.call('evals.batches.start', quickBody(`case-${index}`))));
        for (const answer of started) expect(answer.status).toBe(200);
        await Promise.all(started.map((answer) => waitForBatch(server.client, answer.body.id as string)));
        batches.push(...started.map((answer) => answer.body.id as string));
      }
    }, 180_000);

    afterAll(async () => {
      await server.runtime.readStore.dropAll();
      await server.close();
    });

    it('answers the reads from MongoDB: batches page newest first, a batch reads back with its runs', async () => {
      const first = await server.client.call('evals.batches.list', { limit: 4 });
      expect(first.status).toBe(200);
      expect(first.body.total).toBe(7);
      const second = await server.client.call('evals.batches.list', { limit: 4, cursor: first.body.next });
      const listed = [...first.body.batches, ...second.body.batches].map((batch: { id: string }) => batch.id);
      expect([...listed].sort()).toEqual([...batches].sort());
      expect(second.body.next).toBeNull();
      const batch = await server.client.call('evals.batches.get', { id: batches[0] });
      expect(batch.body).toMatchObject({ id: batches[0], status: 'finished' });
    });

    it('keeps prompts and keys: a promotion and a revocation read back at once', async () => {
      const api = server.client;
      expect((await api.call('prompts.versions.create', { id: 'support/triage', content: 'Triage {{x}}' })).status).toBe(200);
      expect((await api.call('prompts.versions.create', { id: 'support/triage', content: 'Triage {{x}} again' })).status).toBe(200);
      expect((await api.call('prompts.promote', { id: 'support/triage', channel: 'production', version: 2 })).status).toBe(200);
      expect((await api.call('prompts.get', { id: 'support/triage' })).body).toMatchObject({ version: 2 });
      const key = await api.call('auth.keys.create', { name: 'reader', permissions: ['evals:read'] });
      expect((await api.withKey(key.body.key).call('auth.whoami')).status).toBe(200);
      expect((await api.call('auth.keys.revoke', { id: key.body.id })).body).toEqual({ ok: true });
      expect((await api.withKey(key.body.key).call('auth.whoami')).status).toBe(401);
    });

    it('holds the documents a replay of the log makes, and reads them back after a restart', async () => {
      const { readStore, eventStore, projections } = server.runtime;
      await projections.waitFor(await eventStore.headPosition(), 10_000);
      const rebuilt = await rebuildFromLog(eventStore);
      // The read models' collections (not the lease), as the replay names them.
      const names = await rebuilt.collectionNames();
      const live = await snapshot(readStore, names);
      expect(live.eval_batches).toHaveLength(7);
      expect(live).toEqual(await snapshot(rebuilt, names));

      await server.close();
      server = await startInProcess(env);
      expect((await server.client.call('evals.batches.list', { limit: 20 })).body.total).toBe(7);
      const started = await server.client.call('evals.batches.start', quickBody('after-restart'));
      await waitForBatch(server.client, started.body.id as string);
      expect((await server.client.call('evals.batches.list', { limit: 20 })).body.total).toBe(8);
    }, 60_000);
  });
}
if (targets.length === 0) noTarget('the service on a MongoDB read store');
