/**
 * "production": the production adapters' code paths over the wire, beside the embedded stores.
 * EventStoreDB is the gRPC test server (test/support/eventstoredb/, in this process, on loopback),
 * MongoDB is FerretDB v1.24.2 on SQLite (test/support/ferretdb.ts; skipped without its binary).
 * The stand-ins are not the servers: these figures measure Assay's side of each path (round trips,
 * the chain's claims, the replay's bulks), not what a real cluster would sustain.
 * - appends/s of one organization through the audit chain: one writer, then two instances at once;
 * - audit.verify of one organization's events among many more of other organizations';
 * - replay: read-model documents written per second rebuilding from an API-key history;
 * - a list page (evals.batches.list) at 10,000 batches of one organization.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import type { EventStore, NewEvent } from '#infrastructure/event-store/event-store.port';
import { EventStoreDbEventStore } from '#infrastructure/event-store/eventstoredb/eventstoredb-event-store';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { deriveChainKey } from '#infrastructure/secrets/chain-key';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { MongoReadStore } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { BATCHES, batchProjection } from '#modules/evals/batches/batch.projection';
import { BATCH_TOTALS, batchTotalId } from '#modules/evals/batches/batch-totals.projection';
import { ListBatchesHandler } from '#modules/evals/batches/list-batches/list-batches.handler';
import { ListBatches } from '#modules/evals/batches/list-batches/list-batches.query';
import { VerifyAuditChainHandler } from '#modules/audit/verify-chain/verify-chain.handler';
import { VerifyAuditChain } from '#modules/audit/verify-chain/verify-chain.query';
import { allProjections } from '../src/projections';
import { EventStoreDbTestServer } from '../test/support/eventstoredb/server';
import { ferretDbMissing, startFerretDb } from '../test/support/ferretdb';
import { apiKeyHistory } from './support/api-key-events';
import { adapterLayout, openRawLog, RawLogWriter, tempDir } from './support/sqlite-log';
import type { Progress, Suite } from './support/suite';
import { median, Row, startTimer } from './support/table';

const APPENDS = 400;
const REPLAY_KEYS = 1_200;
const REPLAY_EVENTS = 2_000;
const BATCHES_LISTED = 10_000;
const LIST_ROUNDS = 20;
const VERIFIED_APPENDS = 200;
const OTHERS_PER_APPEND = 200;
const VERIFY_ROUNDS = 5;

function orgEvent(organization: string): NewEvent {
  const id = randomUUID();
  return { id, type: 'BenchRecorded', data: { at: id }, metadata: { organization, actor: 'system:bench', correlationId: id, causationId: id } };
}

/** Appends of one organization to new streams by each writer at once; appends per second over all. */
async function chainedAppends(writers: readonly EventStore[], perWriter: number): Promise<number> {
  const elapsed = startTimer();
  await Promise.all(
    writers.map(async (store) => {
      for (let index = 0; index < perWriter; index++) await store.append(`bench-${randomUUID()}`, [orgEvent('acme')], 'no_stream');
    }),
  );
  return (writers.length * perWriter) / (elapsed() / 1000);
}

async function appendRows(progress: Progress): Promise<Row[]> {
  const temp = tempDir('production');
  const sqlite = [new SqliteEventStore(temp.file('events.sqlite')), new SqliteEventStore(temp.file('events.sqlite'))];
  const server = await EventStoreDbTestServer.start();
  const esdb = [await EventStoreDbEventStore.connect(server.url()), await EventStoreDbEventStore.connect(server.url())];
  try {
    const rates: Record<string, number> = {};
    for (const [name, stores] of [
      ['sqlite', sqlite],
      ['esdb', esdb],
    ] as const) {
      await chainedAppends([stores[0]], 50);
      rates[`${name} one`] = await chainedAppends([stores[0]], APPENDS);
      rates[`${name} two`] = await chainedAppends(stores, APPENDS / 2);
      progress.log(`${name}: ${Math.round(rates[`${name} one`])} appends/s with one writer, ${Math.round(rates[`${name} two`])} with two instances`);
    }
    return [
      {
        benchmark: 'appends of one organization, one writer: EventStoreDB (gRPC test server) vs SQLite',
        measure: 'appends/s',
        value: rates['esdb one'],
        baseline: rates['sqlite one'],
      },
      {
        benchmark: 'appends of one organization, two instances: EventStoreDB (gRPC test server) vs SQLite',
        measure: 'appends/s',
        value: rates['esdb two'],
        baseline: rates['sqlite two'],
      },
    ];
  } finally {
    await Promise.all([...sqlite, ...esdb].map((store) => store.close()));
    await server.stop();
    temp.remove();
  }
}

/**
 * One organization's appends, each followed by other organizations' events (written straight to
 * the log: they are what a read of the organization must not pay for), then audit.verify of the
 * organization as the API runs it; median ms.
 */
async function verifyAmongOthers(store: EventStore, masterKey: Buffer, others: (events: NewEvent[]) => Promise<void>): Promise<number> {
  for (let index = 0; index < VERIFIED_APPENDS; index++) {
    await store.append(`bench-${randomUUID()}`, [orgEvent('acme')], 'no_stream');
    await others(Array.from({ length: OTHERS_PER_APPEND }, (_, other) => orgEvent(`org-${other % 50}`)));
  }
  const handler = new VerifyAuditChainHandler(store, new KeyRing(store, masterKey));
  const samples: number[] = [];
  for (let round = 0; round < VERIFY_ROUNDS; round++) {
    const elapsed = startTimer();
    const report = await handler.execute(new VerifyAuditChain('acme'));
    samples.push(elapsed());
    if (!report.ok || report.checked !== VERIFIED_APPENDS)
      throw new Error(`audit.verify checked ${report.checked} events: ${JSON.stringify(report.firstBreak)}`);
  }
  return median(samples);
}

async function verifyRows(progress: Progress): Promise<Row[]> {
  const temp = tempDir('production-verify');
  // Keyed, as a server keys its chains.
  const masterKey = randomBytes(32);
  const chainKey = deriveChainKey(masterKey);
  const sqlite = new SqliteEventStore(temp.file('events.sqlite'), { chainKey });
  const server = await EventStoreDbTestServer.start();
  const esdb = await EventStoreDbEventStore.connect(server.url(), { chainKey });
  try {
    const asStored = (events: NewEvent[]) =>
      events.map((event) => ({
        id: event.id,
        type: event.type,
        contentType: 'application/json',
        data: Buffer.from(JSON.stringify(event.data)),
        metadata: Buffer.from(JSON.stringify(event.metadata)),
      }));
    const sqliteMs = await verifyAmongOthers(sqlite, masterKey, async (events) => {
      await sqlite.append(`others-${randomUUID()}`, events, 'no_stream');
    });
    const esdbMs = await verifyAmongOthers(
      esdb,
      masterKey,
      async (events) => void server.log.commit(`others-${randomUUID()}`, { kind: 'no_stream' }, asStored(events)),
    );
    progress.log(`audit.verify: ${esdbMs.toFixed(1)} ms on EventStoreDB, ${sqliteMs.toFixed(1)} ms on SQLite`);
    const others = (VERIFIED_APPENDS * OTHERS_PER_APPEND).toLocaleString('en-US');
    return [
      {
        benchmark: `audit.verify of one organization's ${VERIFIED_APPENDS} events among ${others} of others: EventStoreDB (gRPC test server) vs SQLite`,
        measure: 'median ms',
        value: esdbMs,
        baseline: sqliteMs,
      },
    ];
  } finally {
    await Promise.all([sqlite.close(), esdb.close()]);
    await server.stop();
    temp.remove();
  }
}

/**
 * Rebuilds the read models from the log into `store`; documents written per second (counted
 * after). `batched`: as `assay projections rebuild` replays into MongoDB, its writes in ordered
 * bulks; the in-memory store applies each event in one step instead.
 */
async function replayInto(log: EventStore, store: ReadStore, batched: boolean): Promise<number> {
  const elapsed = startTimer();
  const runner = new ProjectionRunner(log, store, allProjections, new JsonLogger('warn'), 'bench-production', { batchedCatchUp: batched });
  await runner.start();
  await runner.stop();
  const ms = elapsed();
  let documents = 0;
  for (const name of await store.collectionNames()) documents += await store.collection(name).count({});
  return documents / (ms / 1000);
}

/**
 * 10,000 batch documents of one organization, then the first page as evals.batches.list answers
 * it (an indexed read of 21, the total read by `_id`); median ms. FerretDB v1 reads the whole
 * collection for a filter beyond `_id`, so its figure is that scan's, not the page's.
 */
async function listPage(store: ReadStore): Promise<number> {
  await store.ensureIndexes(BATCHES, batchProjection.collections[BATCHES]);
  const batches = store.collection(BATCHES);
  const started = Date.parse('2026-01-01T00:00:00.000Z');
  for (let index = 0; index < BATCHES_LISTED; index++) {
    const startedAtMillis = started + index * 1000;
    await batches.insertOne({
      _id: `bat_${String(index).padStart(6, '0')}`,
      _position: index,
      organization: 'acme',
      status: 'finished',
      startedAt: new Date(startedAtMillis).toISOString(),
      startedAtMillis,
      finishedAt: null,
      failure: null,
      cases: 1,
      runs: 1,
      scored: 1,
      passed: 1,
      voided: 0,
      trigger: { source: 'api', url: null },
      suiteId: 'suite',
      suiteName: 'suite',
    });
  }
  // The total, as the batch totals projection keeps it.
  await store.collection(BATCH_TOTALS).insertOne({ _id: batchTotalId('acme', null), organization: 'acme', suiteId: null, batches: BATCHES_LISTED });
  const handler = new ListBatchesHandler(store);
  const samples: number[] = [];
  for (let round = 0; round < LIST_ROUNDS; round++) {
    const elapsed = startTimer();
    const page = await handler.execute(new ListBatches('acme', null, 20, null));
    samples.push(elapsed());
    if (page.total !== BATCHES_LISTED || page.batches.length !== 20) throw new Error(`The page listed ${page.batches.length} of ${page.total} batches.`);
  }
  return median(samples);
}

async function mongoRows(progress: Progress): Promise<Row[]> {
  const missing = ferretDbMissing();
  if (missing) {
    progress.log(`FerretDB rows skipped: ${missing}`);
    return [];
  }
  const temp = tempDir('production-replay');
  const file = temp.file('events.sqlite');
  const writer = new RawLogWriter(openRawLog(file, await adapterLayout(file)));
  writer.bulkLoad(apiKeyHistory({ keys: REPLAY_KEYS, revocations: REPLAY_EVENTS - REPLAY_KEYS, organizations: 20, seed: 42 }).entries);
  const log = SqliteEventStore.open(file);
  const ferret = await startFerretDb();
  try {
    const memoryReplay = await replayInto(log, new MemoryReadStore(), false);
    const replayStore = await MongoReadStore.connect(ferret.url('bench_replay'), 'bench_replay');
    const mongoReplay = await replayInto(log, replayStore, true);
    await replayStore.close();
    progress.log(`replay: ${Math.round(mongoReplay)} documents/s into FerretDB, ${Math.round(memoryReplay)} into memory`);
    const memoryPage = await listPage(new MemoryReadStore());
    const listStore = await MongoReadStore.connect(ferret.url('bench_list'), 'bench_list');
    const mongoPage = await listPage(listStore);
    await listStore.close();
    progress.log(`a list page at ${BATCHES_LISTED} batches: ${mongoPage.toFixed(1)} ms on FerretDB, ${memoryPage.toFixed(2)} ms in memory`);
    return [
      {
        benchmark: `replay of ${REPLAY_EVENTS.toLocaleString('en-US')} events: MongoDB (FerretDB) vs memory`,
        measure: 'documents/s',
        value: mongoReplay,
        baseline: memoryReplay,
      },
      {
        benchmark: `evals.batches.list page at ${BATCHES_LISTED.toLocaleString('en-US')} batches: MongoDB (FerretDB) vs memory`,
        measure: 'median ms',
        value: mongoPage,
        baseline: memoryPage,
      },
    ];
  } finally {
    await log.close();
    await ferret.stop();
    fs.rmSync(ferret.dir, { recursive: true, force: true });
    temp.remove();
  }
}

export const productionSuite: Suite = {
  name: 'production',
  explicit: true,
  description:
    'the EventStoreDB and MongoDB adapters over their wire protocols, against stand-ins (the gRPC test server, FerretDB on SQLite), beside the embedded stores: figures for Assay\u2019s code path, not for a real cluster',
  async run(progress: Progress): Promise<Row[]> {
    return [...(await appendRows(progress)), ...(await verifyRows(progress)), ...(await mongoRows(progress))];
  },
};
