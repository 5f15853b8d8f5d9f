/**
 * "replay": rebuilding every read model from a 100,000-event log (API keys issued and revoked)
 * with a ProjectionRunner over a fresh MemoryReadStore, against reading the same events through
 * the port's readAll with no handler. A raw better-sqlite3 iterate() of the table is reported
 * beside them as the floor. Targets: replay >= 0.5x readAll, and >= 100,000 events/s.
 */
import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import type { Projection } from '#infrastructure/processing/projection';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { API_KEYS } from '#modules/auth/api-keys/api-key.projection';
import { allProjections } from '../src/projections';
import { apiKeyHistory } from './support/api-key-events';
import { adapterLayout, openRawLog, RawLogWriter, tempDir } from './support/sqlite-log';
import type { Progress, Suite } from './support/suite';
import { median, Row, startTimer } from './support/table';

const EVENTS = 100_000;
/** 60,000 keys issued and 40,000 of them revoked: the decider revokes a key at most once. */
const KEYS = 60_000;
const ORGANIZATIONS = 200;
const READ_PAGE = 1_000;
const ROUNDS = 5;
const TARGET_RATIO = 0.5;
const TARGET_EVENTS_PER_SECOND = 100_000;

/** Every event through the port, in pages, touching nothing but the count. */
async function readAllPages(store: EventStore): Promise<number> {
  let after: number | undefined;
  let count = 0;
  for (;;) {
    const page = await store.readAll({ after, maxCount: READ_PAGE });
    if (page.length === 0) return count;
    count += page.length;
    after = page[page.length - 1].position;
  }
}

function iterateRaw(writer: RawLogWriter): number {
  let count = 0;
  const rows = writer.db.prepare('SELECT position, id, stream, revision, type, data, metadata, created_at FROM events ORDER BY position').iterate();
  for (const row of rows) if (row) count += 1;
  return count;
}

/**
 * Rebuilds read models from the whole log with a fresh runner and MemoryReadStore: `runner.start()`
 * resolves once the head is reached. With no projections it measures the runner alone (the
 * subscription and the per-event checkpoint), which tells its cost from the projections'.
 */
async function replay(store: EventStore, projections: readonly Projection[], progress: Progress): Promise<{ readStore: MemoryReadStore; position: number }> {
  const readStore = new MemoryReadStore();
  // The full replay's own lines (every 50,000 events, then when caught up) are its progress.
  const logger = new JsonLogger(projections.length > 0 ? 'info' : 'warn', (line) => progress.log(`runner: ${line}`));
  const runner = new ProjectionRunner(store, readStore, projections, logger, 'bench-replay');
  await runner.start();
  const position = runner.position;
  await runner.stop();
  return { readStore, position };
}

function perSecond(events: number, ms: number): number {
  return events / (ms / 1000);
}

export const replaySuite: Suite = {
  name: 'replay',
  description:
    `rebuilding read models from ${(EVENTS / 1000).toFixed(0)}k ApiKeyIssued/ApiKeyRevoked events (${KEYS.toLocaleString('en-US')} keys) with a ProjectionRunner ` +
    `over a fresh MemoryReadStore, vs readAll through the port (pages of ${READ_PAGE.toLocaleString('en-US')}) and a raw better-sqlite3 iterate(); median of ${ROUNDS} rounds`,
  async run(progress: Progress): Promise<Row[]> {
    const temp = tempDir('replay');
    const file = temp.file('events.sqlite');
    const layout = await adapterLayout(file);
    const writer = new RawLogWriter(openRawLog(file, layout));
    let store: SqliteEventStore | undefined;
    try {
      const history = apiKeyHistory({ keys: KEYS, revocations: EVENTS - KEYS, organizations: ORGANIZATIONS, seed: 42 });
      // Seeding is setup, not the subject: one transaction instead of 100,000 fsyncs.
      const written = writer.bulkLoad(history.entries);
      progress.log(`wrote ${written.toLocaleString('en-US')} events (${history.keys} keys, ${history.revoked} revoked) to ${file}`);
      const opened = SqliteEventStore.open(file);
      store = opened;
      const head = await opened.headPosition();
      if (head !== written) throw new Error(`The log's head is ${head}, expected ${written}.`);

      const rebuild = async (projections: readonly Projection[]) => {
        const rebuilt = await replay(opened, projections, progress);
        if (rebuilt.position !== head) throw new Error(`The replay stopped at position ${rebuilt.position} of ${head}.`);
        return rebuilt.readStore;
      };
      const check = async (readStore: MemoryReadStore) => {
        const keys = readStore.collection(API_KEYS);
        const [all, revoked] = await Promise.all([keys.count({}), keys.count({ revokedAt: { $ne: null } })]);
        if (all !== history.keys || revoked !== history.revoked) {
          throw new Error(`The replay built ${all} keys (${revoked} revoked), expected ${history.keys} (${history.revoked}).`);
        }
      };

      progress.log('warm-up: one read, one bare runner and one replay of the whole log');
      await readAllPages(opened);
      await rebuild([]);
      await check(await rebuild(allProjections));

      const samples = { readAll: [] as number[], replay: [] as number[], runnerOnly: [] as number[], raw: [] as number[] };
      for (let round = 1; round <= ROUNDS; round++) {
        let elapsed = startTimer();
        const read = await readAllPages(opened);
        samples.readAll.push(perSecond(read, elapsed()));
        elapsed = startTimer();
        const readStore = await rebuild(allProjections);
        samples.replay.push(perSecond(written, elapsed()));
        await check(readStore);
        elapsed = startTimer();
        await rebuild([]);
        samples.runnerOnly.push(perSecond(written, elapsed()));
        elapsed = startTimer();
        const iterated = iterateRaw(writer);
        samples.raw.push(perSecond(iterated, elapsed()));
        if (read !== written || iterated !== written) throw new Error(`Read ${read} and iterated ${iterated} of ${written} events.`);
        const last = (values: number[]) => Math.round(values[round - 1]).toLocaleString('en-US');
        progress.log(
          `round ${round}/${ROUNDS}, events/s: replay ${last(samples.replay)}, readAll ${last(samples.readAll)}, ` +
            `runner without projections ${last(samples.runnerOnly)}, raw iterate ${last(samples.raw)}`,
        );
      }
      const replayRate = median(samples.replay);
      const readAllRate = median(samples.readAll);
      return [
        {
          benchmark: 'replay: runner + allProjections vs port readAll',
          measure: 'events/s',
          value: replayRate,
          baseline: readAllRate,
          target: { kind: 'ratio-at-least', ratio: TARGET_RATIO },
        },
        {
          benchmark: 'replay: runner + allProjections',
          measure: 'events/s',
          value: replayRate,
          target: { kind: 'at-least', value: TARGET_EVENTS_PER_SECOND, unit: 'events/s' },
        },
        {
          benchmark: 'replay: runner, no projections vs port readAll',
          measure: 'events/s',
          value: median(samples.runnerOnly),
          baseline: readAllRate,
        },
        {
          benchmark: 'replay: port readAll vs raw iterate()',
          measure: 'events/s',
          value: readAllRate,
          baseline: median(samples.raw),
        },
      ];
    } finally {
      await store?.close();
      writer.close();
      temp.remove();
    }
  },
};
