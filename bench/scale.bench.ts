/**
 * "scale": what grows with the log and the read models. Start-up of a server over a
 * 1,000,000-event log with a read-model snapshot against the same start replaying the whole log
 * (target: ready within 2 s with the snapshot), each start in a process of its own as a restart
 * is, and `evals.batches.list` pages at 10,000 batches against 100 (target: within 1.2x, i.e. a
 * ratio of at least 0.83 of the small store's speed).
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
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

/** The compiled child next to this file in dist-bench. */
const START_UP_CHILD = path.resolve(__dirname, 'support/start-up-child.js');

interface StartUp {
  /** startServer() to ready. */
  readyMs: number;
  /** The process's start to ready: Node and the module loading as well. */
  sinceProcessStartMs: number;
}

/**
 * One start and stop over the data directory, in a process of its own: a restart starts with an
 * empty heap, where a start in this process would share it with the seed data and every earlier
 * server's read models.
 */
async function startUp(dataDir: string, progress: Progress): Promise<StartUp> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [START_UP_CHILD, dataDir], { maxBuffer: 16 * 1024 * 1024 });
  for (const line of stderr.split('\n').filter(Boolean)) progress.log(`server: ${line}`);
  return JSON.parse(stdout) as StartUp;
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
    progress.log(`start without a snapshot: ${Math.round(full.readyMs)} ms (${Math.round(full.sinceProcessStartMs)} ms from the process's start)`);
    const withSnapshot: StartUp[] = [];
    for (let round = 0; round < 3; round++) withSnapshot.push(await startUp(temp.dir, progress));
    const round = (values: number[]) => values.map((ms) => Math.round(ms)).join(', ');
    progress.log(
      `starts with the snapshot: ${round(withSnapshot.map((start) => start.readyMs))} ms ` +
        `(${round(withSnapshot.map((start) => start.sinceProcessStartMs))} ms from the process's start)`,
    );
    return [
      {
        benchmark: 'start-up, 1M events: with snapshot vs full replay',
        measure: 'ms to ready',
        value: median(withSnapshot.map((start) => start.readyMs)),
        baseline: full.readyMs,
        target: { kind: 'at-most', value: 2000, unit: 'ms' },
      },
      {
        benchmark: 'the same, from the process start (Node, modules)',
        measure: 'ms to ready',
        value: median(withSnapshot.map((start) => start.sinceProcessStartMs)),
        baseline: full.sinceProcessStartMs,
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
  description:
    'start-up over a 1,000,000-event log with a read-model snapshot vs a full replay, each start in a process of its own ' +
    '(startServer() to ready; then the same from the process start); evals.batches.list pages at 10,000 batches vs 100',
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
