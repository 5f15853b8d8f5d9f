/**
 * The model gateway against the same client calling the fake provider directly, side by side:
 * the latency it adds to a whole answer (p50, p99), to a stream's first token, the throughput of
 * 64 streams at once, and the gateway's own CPU per call (it runs alone in a child process).
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { startFakeProvider } from '../test/support/fake-provider';
import type { Progress, Suite } from './support/suite';
import { percentile, Row } from './support/table';

const WHOLE_CALLS = Number(process.env.BENCH_GATEWAY_CALLS ?? 2000);
const STREAM_CALLS = Number(process.env.BENCH_GATEWAY_STREAMS ?? 500);
const CONCURRENT = 64;
const CONCURRENT_SECONDS = Number(process.env.BENCH_GATEWAY_SECONDS ?? 30);

interface Target {
  /** The origin the calls go to: the fake's, or the gateway's. */
  base: string;
  headers: Record<string, string>;
}

const BODY = (stream: boolean) => JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'hello' }], stream });

async function call(target: Target, stream: boolean): Promise<{ totalMs: number; firstMs: number }> {
  const started = performance.now();
  const answer = await fetch(`${target.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: BODY(stream),
  });
  if (!answer.ok || answer.body === null) throw new Error(`HTTP ${answer.status}`);
  let firstMs = -1;
  for await (const _chunk of answer.body) if (firstMs < 0) firstMs = performance.now() - started;
  return { totalMs: performance.now() - started, firstMs };
}

/** `count` calls one after another; the latencies of each (whole) or of the first chunk (streamed). */
async function sequential(target: Target, count: number, stream: boolean): Promise<number[]> {
  for (let warm = 0; warm < 50; warm += 1) await call(target, stream);
  const samples: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const result = await call(target, stream);
    samples.push(stream ? result.firstMs : result.totalMs);
  }
  return samples;
}

/** `CONCURRENT` streams at once for the given seconds: calls finished per second, and errors. */
async function concurrent(target: Target, seconds: number): Promise<{ perSecond: number; errors: number }> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: CONCURRENT }, async () => {
      while (performance.now() < deadline) {
        try {
          await call(target, true);
          done += 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  return { perSecond: done / seconds, errors };
}

class GatewayChild {
  private constructor(
    private readonly child: ChildProcess,
    private readonly lines: AsyncIterator<string>,
    readonly target: Target,
  ) {}

  static async start(providerURL: string): Promise<GatewayChild> {
    const child = spawn(process.execPath, [path.join(__dirname, 'support', 'gateway-child.js'), providerURL], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const first = await lines.next();
    const { url, token } = JSON.parse(String(first.value)) as { url: string; token: string };
    return new GatewayChild(child, lines, { base: url, headers: { authorization: `Bearer ${token}` } });
  }

  /** The gateway process's CPU so far (ms) and the calls it forwarded. */
  async reading(): Promise<{ cpuMs: number; calls: number }> {
    this.child.stdin!.write('\n');
    return JSON.parse(String((await this.lines.next()).value)) as { cpuMs: number; calls: number };
  }

  stop(): void {
    this.child.kill();
  }
}

async function run(progress: Progress): Promise<Row[]> {
  const fake = await startFakeProvider();
  fake.setDefault({ text: 'hello from the model', usage: { input: 10, output: 5 } });
  const gateway = await GatewayChild.start(fake.url);
  const direct: Target = { base: fake.url.replace(/\/v1$/, ''), headers: { authorization: 'Bearer bench-key' } };
  try {
    progress.log(`${WHOLE_CALLS} whole answers, direct then through the gateway`);
    const wholeDirect = await sequential(direct, WHOLE_CALLS, false);
    const before = await gateway.reading();
    const wholeGateway = await sequential(gateway.target, WHOLE_CALLS, false);
    const after = await gateway.reading();
    const cpuPerCall = (after.cpuMs - before.cpuMs) / (after.calls - before.calls);
    progress.log(`${STREAM_CALLS} streams, time to the first chunk`);
    const firstDirect = await sequential(direct, STREAM_CALLS, true);
    const firstGateway = await sequential(gateway.target, STREAM_CALLS, true);
    progress.log(`${CONCURRENT} streams at once for ${CONCURRENT_SECONDS} s, direct then through the gateway`);
    const loadDirect = await concurrent(direct, CONCURRENT_SECONDS);
    const loadGateway = await concurrent(gateway.target, CONCURRENT_SECONDS);
    const p = (samples: number[], q: number) => percentile(samples, q);
    return [
      { benchmark: 'whole answer, p50', measure: 'ms', value: p(wholeGateway, 50), baseline: p(wholeDirect, 50) },
      {
        benchmark: 'whole answer, added p50',
        measure: 'ms',
        value: p(wholeGateway, 50) - p(wholeDirect, 50),
        target: { kind: 'at-most', value: 1, unit: 'ms' },
      },
      { benchmark: 'whole answer, p99', measure: 'ms', value: p(wholeGateway, 99), baseline: p(wholeDirect, 99) },
      {
        benchmark: 'whole answer, added p99',
        measure: 'ms',
        value: p(wholeGateway, 99) - p(wholeDirect, 99),
        target: { kind: 'at-most', value: 5, unit: 'ms' },
      },
      { benchmark: 'stream, first chunk p50', measure: 'ms', value: p(firstGateway, 50), baseline: p(firstDirect, 50) },
      {
        benchmark: 'stream, added first chunk p50',
        measure: 'ms',
        value: p(firstGateway, 50) - p(firstDirect, 50),
        target: { kind: 'at-most', value: 2, unit: 'ms' },
      },
      {
        benchmark: `${CONCURRENT} streams at once, ${CONCURRENT_SECONDS} s`,
        measure: 'calls/s',
        value: loadGateway.perSecond,
        baseline: loadDirect.perSecond,
        target: { kind: 'ratio-at-least', ratio: 0.9 },
      },
      {
        benchmark: `${CONCURRENT} streams at once, errors`,
        measure: 'errors',
        value: loadGateway.errors + loadDirect.errors,
        target: { kind: 'at-most', value: 0, unit: 'errors' },
      },
      { benchmark: 'gateway CPU per call', measure: 'ms', value: cpuPerCall },
    ];
  } finally {
    gateway.stop();
    await fake.close();
  }
}

export const gatewaySuite: Suite = {
  name: 'gateway',
  description: 'the model gateway against the same client calling the fake provider directly: added latency, first token, 64 streams at once, CPU per call',
  run,
};
