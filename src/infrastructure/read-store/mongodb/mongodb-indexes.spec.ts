/**
 * An index whose declaration changed between releases is dropped and built again at the next
 * start, and the start says so in its log: which collection, which index, and what changed.
 * Through the real driver, against FerretDB (and the server MONGODB_URL names).
 */
import type { RecordedEvent } from '../../event-store/event-store.port';
import { SqliteEventStore } from '../../event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '../../logging/json-logger';
import type { Projection } from '../../processing/projection';
import { ProjectionRunner } from '../../processing/projection-runner';
import type { IndexSpec } from '../read-store.port';
import { mongoTargets, noTarget, ownDatabase } from '../../../../test/support/mongodb-targets';
import { tempDir } from '../../../../test/support/temp-dirs';
import { MongoReadStore } from './mongodb-read-store';

/** A projection that writes nothing and declares `indexes` on `collection`. */
function declaring(collection: string, indexes: IndexSpec[]): Projection {
  return { name: 'declaring', eventTypes: [], collections: { [collection]: indexes }, project: (_event: RecordedEvent) => undefined };
}

const targets = mongoTargets('The index rebuilds of the MongoDB read store');
for (const target of targets) {
  describe(`read-model indexes on ${target.name}`, () => {
    it('drops and builds again an index whose declaration changed, and logs which, where and why', async () => {
      const database = ownDatabase('indexes');
      const store = await MongoReadStore.connect(target.url(database), database);
      const log = new SqliteEventStore(`${tempDir('assay-indexes-')}/events.sqlite`);
      const lines: string[] = [];
      const start = async (indexes: IndexSpec[]) => {
        const runner = new ProjectionRunner(log, store, [declaring('tickets', indexes)], new JsonLogger('info', (line) => lines.push(line)));
        await runner.start();
        await runner.stop();
      };
      try {
        // An index that names `_id` keeps its name when it is made unique: the same name, another declaration.
        await start([{ keys: { organization: 1, _id: 1 } }]);
        await start([{ keys: { organization: 1, _id: 1 } }]);
        expect(lines.filter((line) => line.includes('index dropped'))).toEqual([]);
        await start([{ keys: { organization: 1, _id: 1 }, unique: true }]);
        const rebuilt = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.level === 'warn');
        expect(rebuilt).toEqual([
          expect.objectContaining({
            msg: 'read-model index dropped and built again: its declaration changed',
            collection: 'tickets',
            index: 'organization_1__id_1',
            reason: 'it is declared unique now',
          }),
        ]);
        expect(await store.ensureIndexes('tickets', [{ keys: { organization: 1, _id: 1 }, unique: true }])).toEqual([]);
      } finally {
        await store.dropAll();
        await store.close();
        await log.close();
      }
    });
  });
}
if (targets.length === 0) noTarget('read-model indexes: mongodb');
