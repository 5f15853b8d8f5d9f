/**
 * "scale": what grows with the log and the read models. Start-up of a server over a
 * 1,000,000-event log with a read-model snapshot against the same start replaying the whole log
 * (target: ready within 2 s with the snapshot), and `evals.batches.list` pages at 10,000 batches
 * against 100 (target: within 1.2x, i.e. a ratio of at least 0.83 of the small store's speed).
 */
import { loadConfig } from '../src/config';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { startServer } from '../src/main';
import { batchProjection, BATCHES, BatchDocument } from '#modules/evals/batches/batch.projection';
import { ListBatchesHandler } from '#modules/evals/batches/list-batches/list-batches.handler';
import { ListBatches } from '#modules/evals/batches/list-batches/list-batches.query';
import { EVENT_LOG_FILE } from '../src/runtime';
import { apiKeyHistory } from './support/api-key-events';
import { adapterLayout, openRawLog, RawLogWriter, tempDir } from './support/sqlite-log';
import type { Progress, Suite } from './support/suite';
import { median, Row, startTimer } from './support/table';

const EVENTS = 1_000_000;
const KEYS = 600_000;
const PAGES = 2_000;
const ROUNDS = 5;

async function startUp(dataDir: string, progress: Progress): Promise<number> {
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', ASSAY_DATA_DIR: dataDir, ASSAY_LOG_LEVEL: 'warn' });
  const elapsed = startTimer();
  const server = await startServer(config, new JsonLogger('warn', (line) => progress.log(`server: ${line}`)));
  const ms = elapsed();
  await server.close();
  return ms;
}

/**
 * Writes the 1,000,000-event log. Its own function, so that the generated history is garbage
 * before the measured starts: the server shares this process's heap, and a server of its own
 * would not hold a million seed events beside its read models.
 */
async function writeLog(file: string): Promise<number> {
  const layout = await adapterLayout(file);
  const writer = new RawLogWriter(openRawLog(file, layout));
  try {
    return writer.bulkLoad(apiKeyHistory({ keys: KEYS, revocations: EVENTS - KEYS, organizations: 500, seed: 7 }).entries);
  } finally {
    writer.close();
  }
}

async function startUpRows(progress: Progress): Promise<Row[]> {
  const temp = tempDir('scale');
  try {
    const written = await writeLog(temp.file(EVENT_LOG_FILE));
    progress.log(`wrote ${written.toLocaleString('en-US')} events`);
    // The first start replays the whole log and writes a snapshot when caught up (and at its stop).
    const full = await startUp(temp.dir, progress);
    progress.log(`start without a snapshot: ${Math.round(full)} ms`);
    const withSnapshot: number[] = [];
    for (let round = 0; round < 3; round++) withSnapshot.push(await startUp(temp.dir, progress));
    progress.log(`starts with the snapshot: ${withSnapshot.map((ms) => Math.round(ms)).join(', ')} ms`);
    return [
      {
        benchmark: 'start-up, 1M events: with snapshot vs full replay',
        measure: 'ms to ready',
        value: median(withSnapshot),
        baseline: full,
        target: { kind: 'at-most', value: 2000, unit: 'ms' },
      },
    ];
  } finally {
    temp.remove();
  }
}

function batch(index: number): BatchDocument {
  return {
    _id: `batch_${String(index).padStart(8, '0')}`,
    organization: 'bench',
    startedAtMillis: 1_700_000_000_000 + index * 60_000,
    startedAt: new Date(1_700_000_000_000 + index * 60_000).toISOString(),
    status: 'finished',
    finishedAt: null,
    failure: null,
    cases: 1,
    runs: 1,
    scored: 1,
    passed: 1,
    voided: 0,
    trigger: null,
    suiteId: 'suite',
    suiteName: 'suite',
    _position: index,
  } as unknown as BatchDocument;
}

/** Pages per second of `evals.batches.list` (first pages and pages from a cursor in the middle). */
async function listRate(batches: number): Promise<number> {
  const store = new MemoryReadStore();
  for (const [collection, indexes] of Object.entries(batchProjection.collections)) await store.ensureIndexes(collection, indexes);
  const collection = store.collection<BatchDocument>(BATCHES);
  for (let index = 0; index < batches; index++) await collection.insertOne(batch(index));
  const handler = new ListBatchesHandler(store);
  const first = await handler.execute(new ListBatches('bench', null, 20));
  const middle = await handler.execute(new ListBatches('bench', null, Math.min(100, Math.floor(batches / 2))));
  const cursor = middle.next;
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const elapsed = startTimer();
    for (let page = 0; page < PAGES; page++) await handler.execute(new ListBatches('bench', page % 2 === 0 ? null : cursor, 20));
    samples.push(PAGES / (elapsed() / 1000));
  }
  if (first.total !== batches || first.batches.length !== 20) throw new Error(`The list answered ${first.total} batches, expected ${batches}.`);
  return median(samples);
}

export const scaleSuite: Suite = {
  name: 'scale',
  description: 'start-up over a 1,000,000-event log with a read-model snapshot vs a full replay; evals.batches.list pages at 10,000 batches vs 100',
  async run(progress: Progress): Promise<Row[]> {
    const small = await listRate(100);
    const large = await listRate(10_000);
    progress.log(`evals.batches.list pages/s: ${Math.round(small)} at 100 batches, ${Math.round(large)} at 10,000`);
    const list: Row = {
      benchmark: 'evals.batches.list: 10,000 batches vs 100',
      measure: 'pages/s',
      value: large,
      baseline: small,
      target: { kind: 'ratio-at-least', ratio: 0.83 },
    };
    return [list, ...(await startUpRows(progress))];
  },
};
