import * as path from 'node:path';
import Database from 'better-sqlite3';
import { EVENT_LOG_FILE } from '../../src/runtime';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/**
 * Read-your-writes and the audit trail both rest on one rule: every event a request appends
 * carries that request's correlation id. Each write operation is called here under its own id,
 * then the SQLite log itself is read.
 */
describe('correlation ids over real HTTP', () => {
  let server: InProcessServer;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
  });

  afterAll(async () => {
    await server.close();
  });

  /** The types of the events in the log under a correlation id. */
  function eventTypesUnder(correlationId: string): string[] {
    const db = new Database(path.join(server.dataDir, EVENT_LOG_FILE), { readonly: true });
    try {
      const rows = db.prepare('SELECT type, metadata FROM events ORDER BY position').all() as Array<{ type: string; metadata: string }>;
      return rows.filter((row) => (JSON.parse(row.metadata) as { correlationId: string }).correlationId === correlationId).map((row) => row.type);
    } finally {
      db.close();
    }
  }

  it('stamps the events of every write operation with the request correlation id, and leaves none open', async () => {
    const api = server.client;
    let step = 0;
    const write = async (operation: string, body: unknown) => {
      const correlationId = `corr-write-${(step += 1)}`;
      const answer = await api.call(operation, body, { headers: { 'x-correlation-id': correlationId } });
      expect({ operation, status: answer.status }).toEqual({ operation, status: 200 });
      return { answer, types: () => eventTypesUnder(correlationId) };
    };

    const key = await write('auth.keys.create', { name: 'audited', permissions: ['evals:read'] });
    expect(key.types()).toContain('ApiKeyIssued');
    expect((await write('auth.keys.revoke', { id: key.answer.body.id })).types()).toEqual(['ApiKeyRevoked']);
    expect((await write('prompts.versions.create', { id: 'audited/prompt', content: 'one' })).types().length).toBeGreaterThan(0);
    expect((await write('prompts.promote', { id: 'audited/prompt', channel: 'production', version: 1 })).types().length).toBeGreaterThan(0);
    expect((await write('environment.set', { variables: [{ name: 'AUDITED', value: 'audited-value' }] })).types().length).toBeGreaterThan(0);
    expect((await write('environment.remove', { name: 'AUDITED' })).types().length).toBeGreaterThan(0);
    const connector = await write('connectors.add', {
      integrationId: 'harness_kind_1',
      authMethodId: 'api-key',
      name: 'audited',
      values: { apiKey: 'sk-audited-0123456789' },
    });
    expect(connector.types().length).toBeGreaterThan(0);
    expect((await write('connectors.remove', { id: connector.answer.body.id })).types().length).toBeGreaterThan(0);
    const batch = await write('evals.batches.start', startBody({ suite: { id: 'audited', prompt: 'Write {{word}} into out.txt' } }));
    expect(batch.types()).toContain('BatchStarted');
    await waitForBatch(api, batch.answer.body.id);
    const rerun = await write('evals.cases.run', { id: 'say-hello', trials: 1 });
    expect(rerun.types()).toContain('BatchStarted');
    await waitForBatch(api, rerun.answer.body.id);

    expect(server.runtime.writes.openCorrelations).toBe(0);
  });
});
