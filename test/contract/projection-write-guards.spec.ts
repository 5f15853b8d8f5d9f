/**
 * The hand-written projections (analytics, cases, connections) write guarded by the position they
 * read: a projection owner whose lease lapsed while one of its writes was in flight cannot undo
 * what the new owner wrote since. (A deletion leaves no position behind: a late write after it
 * is kept out by the fence alone, projection-fence.ts.) The log is a real one (batches with tagged
 * cases, two default connectors, one used by trials); each projection replays it twice at once, one writer's
 * write of an early event held until the other has reached the end, and must end in the documents
 * one writer alone makes. On the in-memory store (read, then write) and on FerretDB.
 */
import { randomUUID } from 'node:crypto';
import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import type { Projection } from '#infrastructure/processing/projection';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { analyticsProjection } from '#modules/analytics/analytics.projection';
import { connectionProjection } from '#modules/connectors/connection.projection';
import { caseProjection } from '#modules/evals/cases/case.projection';
import { startBody, waitForBatch } from '../support/evals';
import { readStoreTargets } from '../support/mongodb-targets';
import { INIT_KEY, startInProcess } from '../support/servers';
import { signal, slowWriteAt, withoutEvolveOne } from './read-store.contract';

const PROJECTIONS: Projection[] = [analyticsProjection, caseProjection, connectionProjection];

/** A log with what the three projections read: two batches of tagged cases, two default connectors, one removed. */
async function makeLog(): Promise<RecordedEvent[]> {
  const server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
  try {
    const api = server.client;
    const cases = [
      { id: 'adds', variables: { word: 'x' }, tags: ['arith', 'fast'], verify: 'true' },
      { id: 'divides', variables: { word: 'y' }, tags: ['arith'], verify: 'false' },
    ];
    for (const tags of [['arith', 'fast'], ['slow']]) {
      const body = startBody({
        cases: cases.map((c) => ({ ...c, tags })),
        variants: [{ harness: 'command', model: 'm', profile: { run: 'true' } }],
        trials: 2,
      });
      const started = await api.call('evals.batches.start', body);
      await waitForBatch(api, started.body.id as string);
    }
    const connector = (name: string) =>
      api.call('connectors.add', {
        integrationId: 'openai-compatible',
        authMethodId: 'api-key',
        name,
        isDefault: true,
        values: { apiKey: 'sk-0123456789', baseUrl: 'https://llm.example/v1' },
      });
    await connector('first');
    const second = await connector('second');
    // Trials used the second connection twice (the trial secrets record it so).
    for (const usedAt of ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z']) {
      const id = randomUUID();
      const used = { organization: 'acme', connectionId: second.body.id as string, trialId: null, usedAt };
      await server.runtime.eventStore.append(
        `connector-acme.${second.body.id}`,
        [{ id, type: 'ConnectorUsed', data: used, metadata: { organization: 'acme', actor: 'system:test', correlationId: id, causationId: id } }],
        'any',
      );
    }
    await server.runtime.projections.waitFor(await server.runtime.eventStore.headPosition(), 10_000);
    return await server.runtime.eventStore.readAll();
  } finally {
    await server.close();
  }
}

async function apply(projection: Projection, store: ReadStore, events: readonly RecordedEvent[]): Promise<void> {
  for (const event of events) if (projection.eventTypes.includes(event.type)) await projection.project(event, store);
}

async function documents(store: ReadStore, projection: Projection): Promise<Record<string, unknown[]>> {
  const result: Record<string, unknown[]> = {};
  for (const name of Object.keys(projection.collections)) result[name] = await store.collection(name).find({}, { sort: { _id: 1 } });
  return result;
}

function guardSuite(name: string, open: () => Promise<{ store: ReadStore; close(): Promise<void> }>): void {
  describe(`hand-written projections write guarded by position: ${name}`, () => {
    let log: RecordedEvent[];
    beforeAll(async () => {
      log = await makeLog();
    }, 120_000);

    it.each(PROJECTIONS.map((projection) => [projection.name, projection] as const))(
      '%s: a lapsed writer whose write was in flight does not undo the newer documents',
      async (_, projection) => {
        const events = log.filter((event) => projection.eventTypes.includes(event.type));
        expect(events.length).toBeGreaterThanOrEqual(3);
        const alone = await open();
        const raced = await open();
        try {
          await apply(projection, withoutEvolveOne(alone.store), events);
          // Held: the first event's write, after its writer read the document.
          const held = events[0].position;
          const [reached, release, written, resume] = [signal(), signal(), signal(), signal()];
          const slow = slowWriteAt(raced.store, held, { reached: reached.settle, release: release.promise, written: written.settle, resume: resume.promise });
          const lapsed = apply(projection, slow, events.slice(0, 1));
          await reached.promise;
          // The new owner replays the whole log meanwhile; then the lapsed owner's write lands.
          await apply(projection, withoutEvolveOne(raced.store), events);
          release.settle();
          await written.promise;
          resume.settle();
          await lapsed;
          expect(await documents(raced.store, projection)).toEqual(await documents(alone.store, projection));
        } finally {
          await alone.close();
          await raced.close();
        }
      },
      60_000,
    );
  });
}

for (const { name, open } of readStoreTargets('The projections write guards', 'guards')) guardSuite(name, open);
