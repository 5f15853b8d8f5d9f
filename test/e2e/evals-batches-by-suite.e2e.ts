import type { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { rebuildFromLog, snapshot } from '../support/read-models';
import { INIT_KEY, InProcessServer, keyFor, startInProcess } from '../support/servers';

/** A batch of `suite` whose one trial passes at once. */
async function quickBatch(api: ApiClient, suite: string): Promise<string> {
  const started = await api.call(
    'evals.batches.start',
    startBody({
      suite: { id: suite, prompt: 'Do nothing' },
      cases: [{ id: `${suite}-case`, verify: 'true' }],
      variants: [{ harness: 'command', model: 'm', profile: { run: 'true' } }],
    }),
  );
  expect(started.status).toBe(200);
  expect((await waitForBatch(api, started.body.id)).status).toBe('finished');
  return started.body.id as string;
}

describe('evals.batches.list {suite}: one suite’s batches, newest first', () => {
  let server: InProcessServer;
  let api: ApiClient;
  const ids: Record<string, string[]> = { north: [], south: [] };

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    // Interleaved, so a filter that ignored the suite would show the other's batches in between.
    for (const suite of ['north', 'south', 'north', 'north', 'south']) ids[suite].push(await quickBatch(api, suite));
  }, 120000);

  afterAll(() => server.close());

  const list = async (body: Record<string, unknown>, client = api) => {
    const answer = await client.call('evals.batches.list', body);
    expect(answer.status).toBe(200);
    return answer.body;
  };

  it('lists only the suite’s batches, newest first, with the suite’s total, and pages through them', async () => {
    const north = await list({ suite: 'north' });
    expect(north.batches.map((batch: any) => batch.id)).toEqual([...ids.north].reverse());
    expect(north.total).toBe(3);
    expect(north.next).toBeNull();
    const south = await list({ suite: 'south' });
    expect(south.batches.map((batch: any) => batch.id)).toEqual([...ids.south].reverse());
    expect(south.total).toBe(2);
    expect((await list({})).total).toBe(5);

    const first = await list({ suite: 'north', limit: 2 });
    expect(first.batches.map((batch: any) => batch.id)).toEqual([ids.north[2], ids.north[1]]);
    const second = await list({ suite: 'north', limit: 2, cursor: first.next });
    expect(second.batches.map((batch: any) => batch.id)).toEqual([ids.north[0]]);
    expect(second.next).toBeNull();
  });

  it('lists none for a suite never run, nor for another organization’s suite', async () => {
    expect(await list({ suite: 'never-run' })).toEqual({ batches: [], next: null, total: 0 });
    const globex = await keyFor(server, 'globex', ['evals:read'], 'globex');
    expect(await list({ suite: 'north' }, globex)).toEqual({ batches: [], next: null, total: 0 });
  });

  it('takes a slug of 1 to 100 characters and refuses anything else with 400', async () => {
    expect((await list({ suite: 'n' })).total).toBe(0);
    expect((await list({ suite: 'a'.repeat(100) })).total).toBe(0);
    for (const suite of ['', 'a'.repeat(101), 'North', 'two words', 'a--b', 42]) {
      const answer = await api.call('evals.batches.list', { suite });
      expect(answer.status).toBe(400);
      expect(answer.body._tag).toBe('HttpApiDecodeError');
      expect(answer.body.issues[0].path[0]).toBe('suite');
    }
  });

  it('rebuilds the same batch documents from the log (the new index changes no document)', async () => {
    await server.runtime.projections.waitFor(await server.runtime.eventStore.headPosition(), 10000);
    const live = await snapshot(server.runtime.readStore);
    expect((await snapshot(await rebuildFromLog(server.runtime.eventStore))).eval_batches).toEqual(live.eval_batches);
  });
});
