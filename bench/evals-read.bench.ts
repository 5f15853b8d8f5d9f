/**
 * "evals-read": `evals.batches.get` and `evals.batches.list` over HTTP with 32 concurrent
 * keep-alive clients for 10 s each, over 1,000 stored batches of varied sizes, against a bare
 * Fastify route in the same process that answers the same document from the same read store
 * (the same query code, without Nest's guard, decode pipe, hooks and query bus). `get` is also
 * measured over the 1-trial batches alone, where that fixed cost weighs most. The batches are
 * written straight to the event log before the server starts; the projections catch up at its
 * start. Targets: throughput >= 0.8x the bare route, p99 <= 1.3x.
 */
import { isDeepStrictEqual } from 'node:util';
import { fastify } from 'fastify';
import { loadConfig } from '../src/config';
import type { NewEvent } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { RunningServer, startServer } from '../src/main';
import { planBatch } from '#modules/evals/batches/batch-plan';
import type { BatchStarted } from '#modules/evals/batches/batch.events';
import { GetBatchHandler } from '#modules/evals/batches/get-batch/get-batch.handler';
import { GetBatch } from '#modules/evals/batches/get-batch/get-batch.query';
import { ListBatchesHandler } from '#modules/evals/batches/list-batches/list-batches.handler';
import { ListBatches } from '#modules/evals/batches/list-batches/list-batches.query';
import type { EvalCase, VariantDefinition } from '#shared/eval-definitions';
import type { Cursor } from '#modules/evals/shared/cursor';
import { STRICT_EXECUTION_POLICY } from '#modules/evals/shared/execution-policy';
import { trialCosts, sumCosts } from '#modules/evals/trials/costs';
import { computeDistribution } from '#modules/evals/trials/distribution';
import { EVENT_LOG_FILE } from '../src/runtime';
import { LoadClient, LoadResult, merge } from './support/http-load';
import { tempDir } from './support/sqlite-log';
import type { Progress, Suite } from './support/suite';
import { p50, p99, Row } from './support/table';

const BATCHES = 1_000;
const CLIENTS = 32;
const DURATION_MS = 10_000;
const WARM_UP_MS = 2_000;
/**
 * Each side's 10 s are measured in this many alternating 1 s slices: this machine's speed
 * drifts by tens of percent over seconds, and short slices let the drift weigh on both alike.
 */
const SLICES = 10;
const ORG = 'bench';
const KEY = 'assay_bench_evals_read_key_0123456789abcdef';
const metadata = { organization: ORG, actor: 'bench', correlationId: 'bench-seed', causationId: 'bench-seed' };

const evalCase = (id: string): EvalCase => ({
  id,
  name: id,
  cache: null,
  maxTurns: null,
  timeoutMs: null,
  user: null,
  prepare: null,
  source: null,
  tags: ['bench'],
  variables: { task: id },
  validator: null,
  verify: 'test -f out.txt',
});
const variant = (index: number): VariantDefinition => ({
  harness: 'command',
  model: 'none',
  profile: { run: `echo variant ${index} > out.txt` },
  sandbox: null,
  credentials: null,
});

/**
 * Batches come in the sizes teams start: 1 to 4 cases, 1 or 2 variants, 1 to 3 trials, and 3 to
 * 10 commands per trial (7.5 trials and 6.5 commands on average, up to 24 trials; the spec allows
 * 100). One batch in twelve is the smallest possible one (1 trial), measured on its own as well.
 */
function batchShape(index: number): { cases: number; variants: number; trials: number; commands: number } {
  return { cases: 1 + (index % 4), variants: 1 + (index % 2), trials: 1 + (index % 3), commands: 3 + (index % 8) };
}

function trialEvents(ref: Record<string, string>, ordinal: number, commands: number, startedAtMillis: number) {
  const at = (offsetMs: number) => new Date(startedAtMillis + offsetMs).toISOString();
  const costs = trialCosts({ harness: 'command', model: 'none', sandbox: null, usage: null, hasSimulatedUser: false });
  const recorded = Array.from({ length: commands }, (_, step) => ({
    type: 'TrialCommandRecorded',
    data: {
      ...ref,
      entry: {
        _tag: 'command',
        command: `step ${step}`,
        exitCode: 0,
        startedAtMillis: startedAtMillis + step,
        finishedAtMillis: startedAtMillis + step + 1,
        output: `output of step ${step}: ${'.'.repeat(100)}\n`,
        outputTruncated: false,
      },
    },
  }));
  const result = {
    finishedAt: at(900),
    exitCode: 0,
    timed: false,
    modelMs: 0,
    sandboxMs: 800,
    sandboxId: null,
    filesChanged: ['out.txt'],
    artifacts: [],
    usage: null,
    costs,
    harnessVersion: 'command',
  };
  return [
    { type: 'TrialQueued', data: { ...ref, ordinal, queuedAt: at(0) } },
    { type: 'TrialStarted', data: { ...ref, startedAt: at(10) } },
    ...recorded,
    { type: 'TrialVerified', data: { ...ref, command: 'test -f out.txt', exitCode: 0 } },
    { type: 'TrialScored', data: { ...ref, ...result, status: 'passed' } },
  ];
}

/** One finished batch of the index's shape, every trial passed, by stream. */
function batchStreams(index: number, startedAtMillis: number): Array<[string, Array<{ type: string; data: unknown }>]> {
  const now = new Date(startedAtMillis);
  const shape = batchShape(index);
  const suite = { id: `suite-${index % 10}`, name: `Suite ${index % 10}`, prompt: 'Solve {{task}}', source: null };
  const cases = Array.from({ length: shape.cases }, (_, n) => evalCase(`case-${n + 1}`));
  const plan = { suite, cases, variants: Array.from({ length: shape.variants }, (_, n) => variant(n)), trials: shape.trials };
  const planned = planBatch(plan, ORG, now, STRICT_EXECUTION_POLICY.defaultUserModel);
  const started: BatchStarted['data'] = {
    batchId: planned.batchId,
    organization: ORG,
    startedAt: now.toISOString(),
    trigger: { source: 'api', url: null },
    checksIn: false,
    trials: shape.trials,
    suite,
    cases: plan.cases,
    runs: planned.runs,
    author: 'bench',
    idempotencyKey: null,
  };
  const streams: Array<[string, Array<{ type: string; data: unknown }>]> = [[`batch-${planned.batchId}`, [{ type: 'BatchStarted', data: started }]]];
  for (const run of planned.runs) {
    run.trialIds.forEach((trialId, ordinal) => {
      const ref = { trialId, runId: run.runId, batchId: planned.batchId, organization: ORG };
      streams.push([`trial-${trialId}`, trialEvents(ref, ordinal + 1, shape.commands, startedAtMillis)]);
    });
    const distribution = computeDistribution(run.trialIds.map(() => ({ status: 'passed', commands: shape.commands })));
    const costs = trialCosts({ harness: 'command', model: 'none', sandbox: null, usage: null, hasSimulatedUser: false });
    const runCosts = sumCosts(run.trialIds.map(() => costs));
    const finishedAt = new Date(startedAtMillis + 950).toISOString();
    streams.push([
      `run-${run.runId}`,
      [
        {
          type: 'RunFinished',
          data: { runId: run.runId, batchId: planned.batchId, organization: ORG, status: 'finished', failure: null, distribution, costs: runCosts, finishedAt },
        },
      ],
    ]);
  }
  streams[0][1].push({
    type: 'BatchFinished',
    data: { batchId: planned.batchId, organization: ORG, finishedAt: new Date(startedAtMillis + 1000).toISOString() },
  });
  return streams;
}

/**
 * Writes the finished batches to a new log through the event store port, one append per
 * stream, and returns the ids of the smallest ones (one trial).
 */
async function seed(file: string, progress: Progress): Promise<string[]> {
  const store = SqliteEventStore.open(file);
  const counter = progress.counter('batches written', BATCHES);
  const first = Date.now() - BATCHES * 60_000;
  const smallest: string[] = [];
  let events = 0;
  try {
    for (let index = 0; index < BATCHES; index += 1) {
      const streams = batchStreams(index, first + index * 60_000);
      const { cases, variants, trials } = batchShape(index);
      if (cases * variants * trials === 1) smallest.push(streams[0][0].slice('batch-'.length));
      for (const [stream, recorded] of streams) {
        const stored: NewEvent[] = recorded.map((event) => ({ id: globalThis.crypto.randomUUID(), ...event, metadata }));
        await store.append(stream, stored, 'no_stream');
        events += stored.length;
      }
      counter.tick();
    }
  } finally {
    await store.close();
  }
  progress.log(`${events.toLocaleString('en-US')} events written, ${smallest.length} of the batches have a single trial`);
  return smallest;
}

/** The bare routes: the same handlers' query code on the same read store, straight from Fastify. */
async function bareServer(readStore: ReadStore): Promise<{ url: string; close(): Promise<void> }> {
  const get = new GetBatchHandler(readStore);
  const list = new ListBatchesHandler(readStore);
  const app = fastify({ logger: false });
  app.post('/v1/evals.batches.get', async (request) => get.execute(new GetBatch(ORG, (request.body as { id: string }).id)));
  app.post('/v1/evals.batches.list', async (request) => {
    const body = request.body as { cursor?: Cursor; limit?: number };
    return list.execute(new ListBatches(ORG, body.cursor ?? null, body.limit));
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, close: () => app.close() };
}

async function post(url: string, operation: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(`${url}/v1/${operation}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${operation} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** Every page's body, by following the cursors (and with them, every batch id). */
async function listBodies(url: string, auth: Record<string, string>): Promise<{ pages: unknown[]; ids: string[] }> {
  const pages: unknown[] = [{}];
  const ids: string[] = [];
  for (let body: Record<string, unknown> = {}; ;) {
    const page = await post(url, 'evals.batches.list', body, auth);
    ids.push(...page.batches.map((batch: { id: string }) => batch.id));
    if (!page.next) return { pages, ids };
    body = { cursor: page.next };
    pages.push(body);
  }
}

/**
 * Warms both sides up, then measures them in alternating slices (bare, service, bare, ...), so
 * that drift in the process (heap growth, JIT, other load on the machine) weighs on both alike.
 */
async function compare(
  label: string,
  operation: string,
  service: string,
  bare: string,
  bodies: unknown[],
  auth: Record<string, string>,
  progress: Progress,
): Promise<Row[]> {
  const sample = bodies[bodies.length >> 1];
  if (!isDeepStrictEqual(await post(service, operation, sample, auth), await post(bare, operation, sample))) {
    throw new Error(`The bare route's ${operation} answers another document than the service's.`);
  }
  const client = (url: string, headers: Record<string, string>) => LoadClient.start({ url, path: `/v1/${operation}`, bodies, headers, clients: CLIENTS });
  const [bareClient, serviceClient] = [client(bare, {}), client(service, auth)];
  const bareSlices: LoadResult[] = [];
  const serviceSlices: LoadResult[] = [];
  try {
    await bareClient.run(WARM_UP_MS);
    await serviceClient.run(WARM_UP_MS);
    for (let slice = 0; slice < SLICES; slice += 1) {
      bareSlices.push(await bareClient.run(DURATION_MS / SLICES));
      serviceSlices.push(await serviceClient.run(DURATION_MS / SLICES));
    }
  } finally {
    await Promise.all([bareClient.close(), serviceClient.close()]);
  }
  const [baseline, measured] = [merge(bareSlices), merge(serviceSlices)];
  const rate = (result: LoadResult) => (result.requests * 1000) / result.elapsedMs;
  const pairs = serviceSlices.map((slice, index) => rate(slice) / rate(bareSlices[index])).sort((a, b) => a - b);
  progress.log(
    `${label}: ${measured.requests} requests to the service, ${baseline.requests} to the bare route; ` +
      `throughput ratio of each slice pair from ${pairs[0].toFixed(2)} to ${pairs[pairs.length - 1].toFixed(2)}, median ${pairs[pairs.length >> 1].toFixed(2)}`,
  );
  const bareP99 = p99(baseline.latencies);
  return [
    { benchmark: label, measure: 'requests/s', value: rate(measured), baseline: rate(baseline), target: { kind: 'ratio-at-least', ratio: 0.8 } },
    { benchmark: label, measure: 'p50 ms', value: p50(measured.latencies), baseline: p50(baseline.latencies) },
    {
      benchmark: label,
      measure: 'p99 ms',
      value: p99(measured.latencies),
      baseline: bareP99,
      target: { kind: 'at-most', value: 1.3 * bareP99, unit: 'ms (1.3x bare)' },
    },
  ];
}

export const evalsReadSuite: Suite = {
  name: 'evals-read',
  description:
    `evals.batches.get and evals.batches.list over ${BATCHES.toLocaleString('en-US')} stored batches of 1 to 24 trials (and get over the 1-trial ones alone), ${CLIENTS} keep-alive clients for ${DURATION_MS / 1000} s on each side in ${SLICES} alternating slices; ` +
    'baseline: a bare Fastify route in the same process answering the same document from the same read store',
  async run(progress: Progress): Promise<Row[]> {
    const temp = tempDir('evals-read');
    let server: RunningServer | null = null;
    let bare: { url: string; close(): Promise<void> } | null = null;
    try {
      const smallest = await seed(temp.file(EVENT_LOG_FILE), progress);
      const env = { HOST: '127.0.0.1', PORT: '0', ASSAY_DATA_DIR: temp.dir, ASSAY_INIT_ORG: ORG, ASSAY_INIT_API_KEY: KEY };
      server = await startServer(loadConfig(env), new JsonLogger('silent'));
      progress.log(`read models caught up at position ${server.runtime.projections.position}`);
      bare = await bareServer(server.runtime.readStore);
      const auth = { authorization: `Bearer ${KEY}` };
      const { pages, ids } = await listBodies(server.url, auth);
      if (ids.length !== BATCHES) throw new Error(`evals.batches.list pages through ${ids.length} batches, not ${BATCHES}.`);
      const gets = ids.map((id) => ({ id }));
      return [
        ...(await compare('evals.batches.get', 'evals.batches.get', server.url, bare.url, gets, auth, progress)),
        ...(await compare(
          'evals.batches.get 1-trial',
          'evals.batches.get',
          server.url,
          bare.url,
          smallest.map((id) => ({ id })),
          auth,
          progress,
        )),
        ...(await compare('evals.batches.list', 'evals.batches.list', server.url, bare.url, pages, auth, progress)),
      ];
    } finally {
      await bare?.close();
      await server?.close();
      temp.remove();
    }
  },
};
