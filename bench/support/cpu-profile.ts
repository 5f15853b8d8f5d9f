import * as fs from 'node:fs';
import * as path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds on the machine's monotonic clock, as process.hrtime's (see monotonicMicros). */
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds from the previous sample (the first: from startTime). */
  timeDeltas: number[];
}

/** Now on the clock V8's profiles are stamped with (CLOCK_MONOTONIC, shared by every process of the machine). */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** A stretch of a run, in monotonic microseconds: the part of a server's profile that is read. */
export interface ProfileWindow {
  fromMicros: number;
  toMicros: number;
}

/**
 * The parts of the service a sample is put in: the first frame, from the sample's function up
 * its callers, whose file one of these matches (a system call or a built-in counts for the
 * project's code that made it). Tested in this order at each frame.
 */
const PARTS: ReadonlyArray<[string, RegExp]> = [
  [
    'event log (SQLite commits and reads, hash chain, blob references)',
    /infrastructure\/event-store\/|infrastructure\/blob-store\/|better-sqlite3|shared\/event-chain|shared\/hash/,
  ],
  [
    'read models (projections, in-memory store, its snapshots)',
    /infrastructure\/processing\/|infrastructure\/read-store\/|projection|modules\/analytics\/|modules\/evals\/(runs|cases|trials)\//,
  ],
  ['trial files (directory, workspace snapshots, disk usage, conversation file, artifacts)', /execution\/workspace\/|execution\/conversation\//],
  ['commands (sandbox, spawn helper channel, output capture and redaction)', /execution\/sandbox\/|execution\/output\/|child_process/],
  ['trial runner (steps, turns, verdict, set-up)', /modules\/evals\/execution\//],
  ['saga, claims and scheduling', /modules\/evals\/orchestration\//],
  ['HTTP (start request, watch stream, batch reads)', /fastify|@nestjs|infrastructure\/http\/|modules\/evals\/batches\//],
];
const GARBAGE_COLLECTION = 'garbage collection';
const OUTSIDE = 'V8, libuv and Node internals (no project frame)';

/** A server's main-thread time within the windows, by part of the service, in ms; parts in PARTS order, then the rest. */
export function mainThreadParts(profile: CpuProfile, windows: readonly ProfileWindow[]): Array<{ part: string; ms: number }> {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const partOfNode = new Map<number, string>();
  const partOf = (id: number): string => {
    const known = partOfNode.get(id);
    if (known !== undefined) return known;
    const { functionName, url } = nodes.get(id)!.callFrame;
    let part: string | undefined = functionName === '(garbage collector)' ? GARBAGE_COLLECTION : PARTS.find(([, pattern]) => pattern.test(url))?.[0];
    if (part === undefined) {
      const parent = parents.get(id);
      part = parent === undefined ? OUTSIDE : partOf(parent);
    }
    partOfNode.set(id, part);
    return part;
  };
  const totals = new Map<string, number>([...PARTS.map(([part]) => [part, 0] as [string, number]), [GARBAGE_COLLECTION, 0], [OUTSIDE, 0]]);
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    at += profile.timeDeltas[index];
    // A sample stands for the time until the next one.
    const lasted = profile.timeDeltas[index + 1] ?? 0;
    if (nodes.get(id)!.callFrame.functionName === '(idle)') return;
    if (!windows.some((window) => at >= window.fromMicros && at < window.toMicros)) return;
    const part = partOf(id);
    totals.set(part, totals.get(part)! + lasted / 1000);
  });
  return [...totals].map(([part, ms]) => ({ part, ms }));
}

/** The profile a server wrote to `dir` (it writes one, at its graceful stop). */
export function readProfile(dir: string): CpuProfile {
  const files = fs.readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`Expected one CPU profile in ${dir}, found ${files.length}.`);
  return JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8')) as CpuProfile;
}

/**
 * The functions with the most self time in each V8 CPU profile (`node --cpu-prof`) of `dir`, and
 * the same grouped by file (the project's own files, better-sqlite3, node internals): where a
 * server spends its CPU, read without a profiler's UI.
 */
export function summarizeProfiles(dir: string, top = 25): string {
  const files = fs.readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  return files.map((name) => summarize(name, JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as CpuProfile, top)).join('\n');
}

function summarize(name: string, profile: CpuProfile, top: number): string {
  const totalSamples = profile.samples.length;
  const intervalMs = (profile.endTime - profile.startTime) / 1000 / Math.max(1, totalSamples);
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = shortFile(url);
    const key = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
    byFile.set(file, (byFile.get(file) ?? 0) + hits);
  }
  const idle = byFunction.get('(idle) :0') ?? 0;
  const busy = totalSamples - idle;
  const lines = (map: Map<string, number>) =>
    [...map]
      .filter(([key]) => !key.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, hits]) => `  ${((hits / busy) * 100).toFixed(1).padStart(5)}%  ${(hits * intervalMs).toFixed(0).padStart(6)} ms  ${key}`)
      .join('\n');
  return [
    `${name}: ${(busy * intervalMs).toFixed(0)} ms busy of ${(totalSamples * intervalMs).toFixed(0)} ms`,
    ' by function (self time):',
    lines(byFunction),
    ' by file:',
    lines(byFile),
  ].join('\n');
}

function shortFile(url: string): string {
  if (url === '') return '';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const source = url.indexOf('/dist-bench/');
  return source >= 0 ? url.slice(source + '/dist-bench/'.length) : url.replace(/^file:\/\//, '');
}
