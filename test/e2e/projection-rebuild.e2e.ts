import { JsonLogger } from '../../src/infrastructure/logging/json-logger';
import { ProjectionRunner } from '../../src/infrastructure/processing/projection-runner';
import { MemoryReadStore } from '../../src/infrastructure/read-store/memory/memory-read-store';
import type { ReadStore } from '../../src/infrastructure/read-store/read-store.port';
import { allProjections } from '../../src/projections';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/** Every read-model document; the checkpoint is bookkeeping, written lazily, and left out. */
async function snapshot(store: ReadStore): Promise<Record<string, unknown[]>> {
  const result: Record<string, unknown[]> = {};
  for (const name of (await store.collectionNames()).sort()) {
    if (name === 'checkpoints') continue;
    result[name] = await store.collection(name).find({}, { sort: { _id: 1 } });
  }
  return result;
}

describe('projections: rebuilding from the log gives the live documents', () => {
  let server: InProcessServer;
  const quiet = new JsonLogger('silent');

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
    expect(Object.keys(live)).toEqual(expect.arrayContaining(['api_keys']));
    expect(live.api_keys).toHaveLength(21);

    const rebuilt = new MemoryReadStore();
    const runner = new ProjectionRunner(server.runtime.eventStore, rebuilt, allProjections, quiet);
    await runner.start();
    await runner.stop();
    expect(await snapshot(rebuilt)).toEqual(live);
  });

  it('is idempotent: every event delivered twice changes nothing', async () => {
    const twice = new MemoryReadStore();
    const runner = new ProjectionRunner(server.runtime.eventStore, twice, allProjections, quiet);
    await runner.ensureIndexes();
    for (const event of await server.runtime.eventStore.readAll()) {
      await runner.handle(event);
      await runner.handle(event);
    }
    // A stale redelivery of the whole log after the fact changes nothing either.
    for (const event of await server.runtime.eventStore.readAll()) await runner.handle(event);
    const live = await snapshot(server.runtime.readStore);
    expect(await snapshot(twice)).toEqual(live);
  });

  it('writes the checkpoint shortly after the last event, at the head of the log', async () => {
    const head = await server.runtime.eventStore.headPosition();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const checkpoint = await server.runtime.readStore.collection('checkpoints').findOne({ _id: 'projections' });
    expect(checkpoint).toEqual({ _id: 'projections', position: head });
  });
});
