import * as fs from 'node:fs';
import { loadConfig } from '../src/config';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { RunningServer, startServer } from '../src/main';
import { bareSpawn, detectDefaultSandbox } from '#trial-runner';
import type { Progress, Suite } from './support/suite';
import { tempDir } from './support/sqlite-log';
import { percentile, Row } from './support/table';

const KEY = 'assay_bench_orchestration_key_0123456789';

/** A server on a data directory of its own; `close` stops it and removes the directory. */
async function serve(parallel: number): Promise<RunningServer> {
  const data = tempDir('orch');
  const dataDir = data.dir;
  // Hosts without bubblewrap measure the process driver, which needs the operator's consent.
  const config = data.file('bench-config.yaml');
  fs.writeFileSync(config, 'allowUnsandboxed: true\n');
  const env = {
    HOST: '127.0.0.1',
    PORT: '0',
    ASSAY_DATA_DIR: dataDir,
    ASSAY_CONFIG: config,
    ASSAY_INIT_ORG: 'bench',
    ASSAY_INIT_API_KEY: KEY,
    ASSAY_MAX_PARALLEL_TRIALS: String(parallel),
  };
  const server = await startServer(loadConfig(env), new JsonLogger('silent'));
  return {
    ...server,
    close: async () => {
      await server.close();
      data.remove();
    },
  };
}

async function call(server: RunningServer, operation: string, body: unknown): Promise<any> {
  const response = await fetch(`${server.url}/v1/${operation}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${operation} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** Starts one batch of `cases` × `trials` trials running `run`, and waits for its end. */
async function runBatch(server: RunningServer, cases: number, trials: number, run: string): Promise<string> {
  const started = await call(server, 'evals.batches.start', {
    suite: { id: 'bench', prompt: 'benchmark' },
    cases: Array.from({ length: cases }, (_, i) => ({ id: `c${i}`, verify: 'true' })),
    variants: [{ harness: 'command', model: 'none', profile: { run } }],
    trials,
  });
  for (;;) {
    const batch = await call(server, 'evals.batches.get', { id: started.id });
    if (batch.status !== 'running') return started.id;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface TrialTiming {
  wallMs: number;
  commandsMs: number;
  startedAt: number;
  finishedAt: number;
}

/** Each trial's wall time (started → verdict) and its commands' own time, from the stored events. */
function trialTimings(events: RecordedEvent[]): TrialTiming[] {
  const byTrial = new Map<string, { started?: number; finished?: number; commandsMs: number }>();
  for (const event of events) {
    const data = event.data as any;
    if (!data?.trialId) continue;
    const timing = byTrial.get(data.trialId) ?? { commandsMs: 0 };
    if (event.type === 'TrialStarted') timing.started = Date.parse(data.startedAt);
    if (event.type === 'TrialCommandRecorded') timing.commandsMs += data.entry.finishedAtMillis - data.entry.startedAtMillis;
    if (event.type === 'TrialScored' || event.type === 'TrialVoided') timing.finished = Date.parse(data.finishedAt);
    byTrial.set(data.trialId, timing);
  }
  return [...byTrial.values()]
    .filter((t) => t.started !== undefined && t.finished !== undefined)
    .map((t) => ({ wallMs: t.finished! - t.started!, commandsMs: t.commandsMs, startedAt: t.started!, finishedAt: t.finished! }));
}

async function overheadRows(progress: Progress, driver: string): Promise<Row[]> {
  const server = await serve(1);
  try {
    progress.log('orchestration overhead: 200 trials of `true`, one at a time');
    for (let batch = 0; batch < 2; batch += 1) await runBatch(server, 10, 10, 'true');
    const timings = trialTimings(await server.runtime.eventStore.readAll());
    const overhead = timings.map((t) => t.wallMs - t.commandsMs);
    const workspace = tempDir('bare');
    const bare: number[] = [];
    const counter = progress.counter('bare spawns', 200);
    try {
      for (let i = 0; i < 200; i += 1) {
        bare.push((await bareSpawn(driver as 'bubblewrap' | 'process', workspace.dir, 'true')).durationMs);
        counter.tick();
      }
    } finally {
      workspace.remove();
    }
    const bareP50 = percentile(bare, 50);
    return [
      {
        benchmark: `trial overhead, \`true\` (${driver})`,
        measure: 'p50 ms above commands',
        value: percentile(overhead, 50),
        baseline: bareP50,
        target: { kind: 'at-most', value: 25, unit: 'ms' },
      },
      { benchmark: `trial overhead, \`true\` (${driver})`, measure: 'p99 ms above commands', value: percentile(overhead, 99), baseline: percentile(bare, 99) },
      {
        benchmark: `trial wall, \`true\` (${driver})`,
        measure: 'p50 ms (2 commands)',
        value: percentile(
          timings.map((t) => t.wallMs),
          50,
        ),
        baseline: 2 * bareP50,
      },
    ];
  } finally {
    await server.close();
  }
}

async function efficiencyRows(progress: Progress): Promise<Row[]> {
  const server = await serve(32);
  try {
    progress.log('parallel efficiency: 64 trials of `sleep 2` at parallelism 32');
    const started = Date.now();
    await runBatch(server, 8, 8, 'sleep 2');
    const batchWallMs = Date.now() - started;
    const timings = trialTimings(await server.runtime.eventStore.readAll());
    const span = Math.max(...timings.map((t) => t.finishedAt)) - Math.min(...timings.map((t) => t.startedAt));
    const idealMs = Math.ceil(64 / 32) * 2000;
    return [
      {
        benchmark: '64 × `sleep 2` at parallelism 32',
        measure: 'efficiency (ideal / trials span)',
        value: idealMs / span,
        target: { kind: 'at-least', value: 0.9, unit: '' },
      },
      { benchmark: '64 × `sleep 2` at parallelism 32', measure: 'trials span ms', value: span, baseline: idealMs },
      { benchmark: '64 × `sleep 2` at parallelism 32', measure: 'start → batch read finished ms', value: batchWallMs, baseline: idealMs },
    ];
  } finally {
    await server.close();
  }
}

export const orchestrationSuite: Suite = {
  name: 'orchestration',
  description:
    'Trials through the whole saga (HTTP start, events, sandbox, verify) against a bare spawn in the same sandbox driver, and parallel efficiency against the ideal time.',
  async run(progress) {
    const driver = (await detectDefaultSandbox()).driver;
    return [...(await overheadRows(progress, driver)), ...(await efficiencyRows(progress))];
  },
};
