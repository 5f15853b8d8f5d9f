import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SandboxDriverName } from '#trial-runner';
import { tempDir } from './sqlite-log';
import { freePort } from '../../test/support/ports';

export const BENCH_KEY = 'assay_bench_throughput_key_0123456789';
/** The compiled CLI next to this file in dist-bench (bench/support → src/cli.js). */
const CLI = path.resolve(__dirname, '../../src/cli.js');
/** Linux's USER_HZ: /proc counts CPU time in hundredths of a second. */
const TICKS_PER_SECOND = 100;

/**
 * The service as an operator runs it (`node cli.js serve`), in a process of its own so that its
 * CPU time is its own: the bench's HTTP client and the sandboxes' processes are not in it.
 */
export interface BenchServer {
  url: string;
  pid: number;
  /** The server's own CPU time so far (user + system, all its threads, children excluded), ms. */
  cpuMs(): number;
  /** The same, split: the server's user and kernel time, its child processes' (the spawn helper), and theirs (the trials' processes). */
  cpuSplit(): CpuSplit;
  call(operation: string, body: unknown): Promise<any>;
  /** Follows the batch on its watch stream (as `assay eval` does) until the stream says it ended. */
  watchUntilEnd(batchId: string): Promise<void>;
  stop(): Promise<void>;
}

export interface BenchServerOptions {
  driver: SandboxDriverName;
  parallel: number;
  /** When set, the server writes a V8 CPU profile (.cpuprofile) there when it stops. */
  cpuProfileDir?: string;
  /** The server's TMPDIR, under which its trial directories go; default its own temporary directory, beside its data. */
  trialsParent?: string;
  /** Lines added to its ASSAY_CONFIG (sandboxes, providers, harnesses). */
  config?: readonly string[];
  /** Variables added to its environment (ASSAY_AGENTS_DIR, a provider's key). */
  env?: Record<string, string>;
}

/** CPU ms of one process: its own user and kernel time, and its waited-for children's (fields 14 to 17 of /proc/<pid>/stat). */
export interface ProcessCpu {
  user: number;
  kernel: number;
  children: number;
}

export function processCpu(pid: number | 'self'): ProcessCpu {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ms = (index: number) => (Number(fields[index]) * 1000) / TICKS_PER_SECOND;
  return { user: ms(11), kernel: ms(12), children: ms(13) + ms(14) };
}

function processCpuMs(pid: number): number {
  const { user, kernel } = processCpu(pid);
  return user + kernel;
}

/** Where a trial's CPU goes, ms (a difference of two readings): the server, the processes it started (the spawn helper), and theirs. */
export interface CpuSplit {
  serverUser: number;
  serverKernel: number;
  helpers: number;
  trialProcesses: number;
}

/** The server's child processes live now (the spawn helper; a process that ended is no longer counted). */
function childPids(pid: number): number[] {
  const listed = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return listed === '' ? [] : listed.split(/\s+/).map(Number);
}

/** The process's CPU (`server`: for the straight trials, the bench's own process), its live children's and theirs. */
export function cpuSplit(pid: number): CpuSplit {
  const server = processCpu(pid);
  const helpers = childPids(pid).flatMap((child) => {
    try {
      return [processCpu(child)];
    } catch {
      return []; // ended between the listing and the reading
    }
  });
  return {
    serverUser: server.user,
    serverKernel: server.kernel,
    helpers: helpers.reduce((total, helper) => total + helper.user + helper.kernel, 0),
    trialProcesses: helpers.reduce((total, helper) => total + helper.children, 0),
  };
}

export async function startBenchServer(options: BenchServerOptions): Promise<BenchServer> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run the bench through "npm run bench".`);
  const data = tempDir('throughput');
  const config = data.file('bench-config.yaml');
  fs.writeFileSync(config, [`allowUnsandboxed: true`, `defaultSandbox: ${options.driver}`, ...(options.config ?? []), ''].join('\n'));
  const port = await freePort();
  const flags = options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir] : [];
  const child: ChildProcess = spawn(process.execPath, [...flags, CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOST: '127.0.0.1',
      PORT: String(port),
      ASSAY_DATA_DIR: data.file('data'),
      ASSAY_CONFIG: config,
      ASSAY_INIT_ORG: 'bench',
      ASSAY_INIT_API_KEY: BENCH_KEY,
      ASSAY_MAX_PARALLEL_TRIALS: String(options.parallel),
      ASSAY_LOG_LEVEL: 'warn',
      TMPDIR: options.trialsParent ?? data.dir,
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`The bench server exited at start: ${errors}`);
    if (
      await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`The bench server did not answer within 30 s: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const pid = child.pid!;
  return {
    url,
    pid,
    cpuMs: () => processCpuMs(pid),
    cpuSplit: () => cpuSplit(pid),
    async call(operation, body) {
      const response = await fetch(`${url}/v1/${operation}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (response.status !== 200) throw new Error(`${operation} answered ${response.status}: ${await response.text()}`);
      return response.json();
    },
    async watchUntilEnd(batchId) {
      const response = await fetch(`${url}/v1/evals.batches.watch?id=${encodeURIComponent(batchId)}`, {
        headers: { authorization: `Bearer ${BENCH_KEY}` },
      });
      if (response.status !== 200 || response.body === null) throw new Error(`evals.batches.watch answered ${response.status}: ${await response.text()}`);
      const decoder = new TextDecoder();
      let tail = '';
      let ended = false;
      // Read to its end, which the server makes right after the batch's last event: a client that
      // let go of the stream early would keep its connection open (undici) and hold the server's stop.
      for await (const chunk of response.body) {
        // Only the end matters: keep enough of the text to find its event name across chunks.
        tail = (tail + decoder.decode(chunk as Uint8Array, { stream: true })).slice(-4096);
        ended ||= tail.includes('event: batch.finished');
      }
      if (!ended) throw new Error(`The watch stream of batch ${batchId} ended before the batch did.`);
    },
    async stop() {
      // SIGTERM: a graceful stop, which is also when --cpu-prof writes its profile.
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      data.remove();
    },
  };
}
