import { rebuildFromLog, replayTwice, snapshot } from '../support/read-models';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

describe('projections: rebuilding from the log gives the live documents', () => {
  let server: InProcessServer;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    const api = server.client;
    for (let index = 0; index < 20; index += 1) {
      const created = await api.call('auth.keys.create', { name: `k${index}`, permissions: ['evals:read'] });
      if (index % 3 === 0) await api.call('auth.keys.revoke', { id: created.body.id });
    }
  });

  afterAll(() => server.close());

  it('replays the whole log into empty read models and gets equal documents', async () => {
    const live = await snapshot(server.runtime.readStore);
    expect(live.api_keys).toHaveLength(21);
    expect(await snapshot(await rebuildFromLog(server.runtime.eventStore))).toEqual(live);
  });

  it('is idempotent: every event delivered twice changes nothing', async () => {
    const live = await snapshot(server.runtime.readStore);
    expect(await snapshot(await replayTwice(server.runtime.eventStore))).toEqual(live);
  });

  it('writes each projection its own checkpoint shortly after the last event, at the head of the log', async () => {
    const head = await server.runtime.eventStore.headPosition();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ids = server.runtime.projections.checkpointIds();
    expect(ids.length).toBeGreaterThan(5);
    const checkpoints = await server.runtime.readStore.collection('checkpoints').find({}, { sort: { _id: 1 } });
    expect(checkpoints).toEqual([...ids].sort().map((_id) => ({ _id, position: head })));
  });
});
