import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { MAX_EVENT_BYTES } from '#infrastructure/event-store/event-store.port';
import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { rebuildFromLog, snapshot } from '../support/read-models';
import { INIT_KEY, InProcessServer, startInProcess, tempDir } from '../support/servers';

const SOURCE_CHARS = 1_000_000;
const OUTPUT_BYTES = 64 * 1024;

/** A million characters, different for each case (so each is a blob of its own). */
const sourceOf = (index: number) => `case ${index}\n`.padEnd(SOURCE_CHARS, `${index}abcdefghijklmnopqrstuvwxyz\n`);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface EventRow {
  position: number;
  type: string;
  bytes: number;
}

function eventSizes(dataDir: string): EventRow[] {
  const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT position, type, length(CAST(data AS BLOB)) + length(CAST(metadata AS BLOB)) AS bytes FROM events').all() as EventRow[];
  } finally {
    db.close();
  }
}

/** Large values out of events: sources and outputs in the blob store, read back whole. */
describe('evals: large payloads live in the blob store, not in events', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  it('starts and runs a batch of 100 cases with 1,000,000-character sources; the BatchStarted event stays small', async () => {
    const cases = Array.from({ length: 100 }, (_, index) => ({
      id: `big-${index}`,
      variables: { word: 'x' },
      source: { kind: 'files', files: { 'big.txt': sourceOf(index) } },
      verify: `test "$(wc -c < big.txt)" -eq ${SOURCE_CHARS}`,
    }));
    const started = await api.call('evals.batches.start', startBody({ cases, variants: [{ harness: 'command', model: 'm', profile: { run: 'true' } }] }));
    expect(started.status).toBe(200);
    // Every get of this batch answers its runs' setups, 100 MB of sources (~1 s to build and read
    // in this process, the server's own): polled every 100 ms, the gets alone starve the trials
    // once the test process's heap is large (the whole suite in one process), so every 3 s here.
    const batch = await waitForBatch(api, started.body.id, 600_000, 3000);
    expect(batch.status).toBe('finished');
    // Each trial's verify saw its whole source in the workspace: the saga read the blobs back.
    expect(batch.runs.flatMap((run: any) => run.trials.map((trial: any) => trial.status))).toEqual(Array(100).fill('passed'));
    const run = await api.call('evals.runs.get', { id: batch.runs[37].id });
    expect(run.body.setup.source.files['big.txt']).toBe(sourceOf(37));

    const sizes = eventSizes(server.dataDir);
    const batchStarted = sizes.filter((row) => row.type === 'BatchStarted');
    expect(batchStarted).toHaveLength(1);
    expect(batchStarted[0].bytes).toBeLessThan(MAX_EVENT_BYTES);
    const source = sourceOf(5);
    expect(fs.readFileSync(path.join(server.dataDir, 'blobs', sha256(source).slice(0, 2), sha256(source).slice(2)), 'utf8')).toBe(source);
  }, 900_000);

  it('keeps a 64 KiB command output whole, reads it back identical, and a rebuild and an inline log give the same answers', async () => {
    const printer = `head -c ${OUTPUT_BYTES} /dev/zero | tr '\\0' 'q'`;
    const started = await api.call(
      'evals.batches.start',
      startBody({
        cases: [{ id: 'loud', variables: { word: 'x' }, verify: 'true' }],
        variants: [{ harness: 'command', model: 'm', profile: { run: printer } }],
      }),
    );
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    const command = batch.runs[0].trials[0].trajectory.find((entry: any) => entry._tag === 'command' && entry.output.length > 1000);
    expect(command.output).toContain('q'.repeat(OUTPUT_BYTES - 1024));
    expect((await api.call('evals.runs.get', { id: batch.runs[0].id })).body).toEqual(batch.runs[0]);

    const sizes = eventSizes(server.dataDir);
    expect(Math.max(...sizes.map((row) => row.bytes))).toBeLessThan(MAX_EVENT_BYTES);
    const recorded = sizes.filter((row) => row.type === 'TrialCommandRecorded');
    expect(Math.max(...recorded.map((row) => row.bytes))).toBeLessThan(8 * 1024);
    expect(fs.existsSync(path.join(server.dataDir, 'blobs', sha256(command.output).slice(0, 2), sha256(command.output).slice(2)))).toBe(true);

    // A rebuild from the log (what `assay projections rebuild` replays) makes the same documents.
    await server.runtime.projections.waitFor(await server.runtime.eventStore.headPosition(), 10_000);
    const live = await snapshot(server.runtime.readStore);
    expect(live.eval_trial_details.length).toBeGreaterThan(0);
    expect(await snapshot(await rebuildFromLog(server.runtime.eventStore))).toEqual(live);

    // The same log written the old way (every value inline, no blobs directory) answers the same.
    const inline = await inlineCopy(server);
    const old = await startInProcess({ ASSAY_DATA_DIR: inline, ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    try {
      expect(fs.existsSync(path.join(inline, 'blobs'))).toBe(false);
      const answer = await old.client.call('evals.batches.get', { id: batch.id });
      expect(answer.body).toEqual(batch);
    } finally {
      await old.close();
    }
  }, 120_000);
});

/** A copy of the server's data directory whose log holds every value inline, as logs written before blobs did. */
async function inlineCopy(server: InProcessServer): Promise<string> {
  const copy = tempDir('assay-inline-log-');
  const source = new Database(path.join(server.dataDir, 'events.sqlite'), { readonly: true });
  await source.backup(path.join(copy, 'events.sqlite'));
  source.close();
  fs.cpSync(path.join(server.dataDir, 'keys'), path.join(copy, 'keys'), { recursive: true });
  const events = await server.runtime.eventStore.readAll();
  const db = new Database(path.join(copy, 'events.sqlite'));
  const update = db.prepare('UPDATE events SET data = ? WHERE position = ?');
  db.transaction(() => events.forEach((event) => update.run(JSON.stringify(event.data), event.position)))();
  db.close();
  return copy;
}
