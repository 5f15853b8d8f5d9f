import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { ChildServer, INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';

/** The lease, and so how long a start may hold its slot before its batch is recorded. */
const LEASE_MS = 2000;
const CASES = 100;

/** A 100-case start: long enough that a kill can land between any two of its writes. */
function bigStart(): Record<string, unknown> {
  const cases = Array.from({ length: CASES }, (_, index) => ({ id: `case-${index + 1}`, variables: { word: 'hello' }, verify: 'true' }));
  return startBody({ suite: { id: 'big', prompt: 'Write {{word}}' }, cases, variants: [{ harness: 'command', model: 'm', profile: { run: 'true' } }] });
}

async function events(api: ApiClient, body: Record<string, unknown>): Promise<any[]> {
  const answer = await api.call('audit.events.list', { ...body, limit: 1000 });
  expect(answer.status).toBe(200);
  return answer.body.events;
}

/** The batch id of the slot the held start took: it never answered, so only the log knows it. */
async function heldBatchId(api: ApiClient): Promise<string> {
  const taken = await events(api, { type: 'BatchSlotTaken' });
  expect(taken).toHaveLength(1);
  return taken[0].data.batchId;
}

async function releasesOf(api: ApiClient, batchId: string): Promise<any[]> {
  return (await events(api, { type: 'BatchSlotReleased' })).filter((event) => event.data.batchId === batchId);
}

/** The slot free, the batch nowhere, three starts admitted, and the release in the log with its reason. */
async function expectNothingLeftOf(api: ApiClient, batchId: string): Promise<void> {
  await waitUntil(async () => (await releasesOf(api, batchId)).length > 0, 20000);
  const releases = await releasesOf(api, batchId);
  expect(releases).toHaveLength(1);
  expect(releases[0].data.reason).toBe('start-not-completed');
  expect((await api.call('evals.batches.get', { id: batchId })).status).toBe(404);
  const listed = await api.call('evals.batches.list', {});
  expect(listed.status).toBe(200);
  expect(listed.body.batches.map((batch: any) => batch.id)).not.toContain(batchId);
  const next = await Promise.all([1, 2, 3].map(() => api.call('evals.batches.start', startBody())));
  expect(next.map((answer) => answer.status)).toEqual([200, 200, 200]);
  for (const answer of next) expect((await waitForBatch(api, answer.body.id)).status).toBe('finished');
}

/**
 * A start writes its slot, then the suite, then one event per case, then BatchStarted, on
 * separate streams. A server killed in between (its whole process group, SIGKILL) must not
 * leave the slot held forever: after the hold (the trial lease) any instance gives it back.
 */
describe('evals: a start killed midway gives its slot back', () => {
  let server: ChildServer | null = null;
  let dataDir: string;
  let pauses: string;

  beforeEach(() => {
    dataDir = tempDir();
    pauses = tempDir('assay-pauses-');
  });

  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = null;
  });

  const env = (extra: Record<string, string> = {}) => ({
    ASSAY_DATA_DIR: dataDir,
    ASSAY_INIT_ORG: 'acme',
    ASSAY_INIT_API_KEY: INIT_KEY,
    ASSAY_TRIAL_LEASE_MS: String(LEASE_MS),
    ...extra,
  });

  /** Starts a server held at `point`, sends the big start, and answers once the server is held there, with the start's answer to come. */
  async function holdStartAt(point: string): Promise<{ answer: Promise<any> }> {
    server = await startChild(env({ ASSAY_TEST_PAUSE_AT: point, ASSAY_TEST_PAUSE_DIR: pauses }), { ownGroup: true });
    const answer = server.client.call('evals.batches.start', bigStart(), { headers: { 'idempotency-key': `held-${point}` } }).catch((error: unknown) => error);
    await waitUntil(async () => fs.existsSync(path.join(pauses, `${point}.paused`)), 20000);
    return { answer };
  }

  it.each(['start:after-slot', 'start:after-suite', 'start:after-case-37'])(
    'killed at %s: after the hold the slot is free and the batch absent',
    async (point) => {
      const { answer } = await holdStartAt(point);
      expect(await server!.stop('SIGKILL')).toBeNull();
      await answer;
      server = await startChild(env(), { ownGroup: true });
      const batchId = await heldBatchId(server.client);
      await expectNothingLeftOf(server.client, batchId);
      // The start's idempotency key was released with it: the same key starts anew.
      const again = await server.client.call('evals.batches.start', startBody(), { headers: { 'idempotency-key': `held-${point}` } });
      expect(again.status).toBe(200);
      expect(again.body.id).not.toBe(batchId);
      await waitForBatch(server.client, again.body.id);
    },
  );

  it('a start still alive past the hold loses its slot and answers 409, leaving no batch behind', async () => {
    const { answer } = await holdStartAt('start:after-case-50');
    const batchId = await heldBatchId(server!.client);
    // The server's own sweep releases the overdue slot while its start is held.
    await waitUntil(async () => (await releasesOf(server!.client, batchId)).length > 0, 20000);
    fs.writeFileSync(path.join(pauses, 'start:after-case-50.resume'), '');
    const refused = await answer;
    expect(refused.status).toBe(409);
    expect(refused.body._tag).toBe('Conflict');
    expect(refused.body.message).toMatch(/held its batch slot longer than 2000 ms .* nothing was started\. Start again\./);
    await expectNothingLeftOf(server!.client, batchId);
  });

  it('never takes the slot of a batch that started, however long it runs', async () => {
    server = await startChild(env(), { ownGroup: true });
    const slow = startBody({ variants: [{ harness: 'command', model: 'm', profile: { run: 'sleep 4' } }] });
    const running = await Promise.all([1, 2, 3].map(() => server!.client.call('evals.batches.start', slow)));
    expect(running.map((answer) => answer.status)).toEqual([200, 200, 200]);
    // Past the hold, with every slot's batch started: the rule of three holds.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 500));
    const fourth = await server.client.call('evals.batches.start', startBody());
    expect(fourth.status).toBe(409);
    expect(fourth.body.message).toContain('already has 3 batches running');
    for (const answer of running) expect((await waitForBatch(server.client, answer.body.id)).status).toBe('finished');
    expect(await events(server.client, { type: 'BatchStartAbandoned' })).toEqual([]);
  });
});
