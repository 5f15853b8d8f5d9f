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
  startTime: number;
  endTime: number;
  samples: number[];
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
