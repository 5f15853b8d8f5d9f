import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatTable, Row, verdictOf } from './table';

/** The repository: the compiled bench runs from dist-bench/bench/support. */
const REPOSITORY = path.resolve(__dirname, '../../..');
export const RESULTS_DIR = path.join(REPOSITORY, 'bench', 'results');

/** What a run was, written above each suite's table. */
export interface RunFacts {
  /** The command as typed, with the BENCH_* settings it ran under. */
  command: string;
  /** The machine before the first suite started: load average, and what it is. */
  machine: string;
  commit: string;
}

/** The facts of this run, read once before the suites start (the load average is the machine's then). */
export function runFacts(args: readonly string[]): RunFacts {
  const settings = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${value ?? ''} `)
    .join('');
  const gib = (os.totalmem() / 2 ** 30).toFixed(1);
  const load = os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
  return {
    command: `${settings}npm run bench --${args.map((arg) => ` ${arg}`).join('')}`,
    machine: `${os.cpus().length} cores, ${gib} GiB memory, Linux ${os.release()}, Node ${process.version}; load average ${load} at the start`,
    commit: gitCommit(),
  };
}

function gitCommit(): string {
  try {
    const run = (args: string[]) => execFileSync('git', args, { cwd: REPOSITORY, encoding: 'utf8', stdio: 'pipe' }).trim();
    // Results files written by earlier runs are not changes to what is measured.
    const changed =
      run(['status', '--porcelain', '--', 'src', 'bench', ':(exclude)bench/results']) === '' ? '' : ', with uncommitted changes in src/ or bench/';
    return `${run(['rev-parse', '--short', 'HEAD'])}${changed}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/**
 * Writes one suite's table to bench/results/YYYY-MM-DD-<suite>.md (today, UTC): a new file with
 * a title, or a new section at the end of the day's file, headed with the time. Returns the path.
 */
export function saveSuiteResults(suite: { name: string; description?: string }, rows: readonly Row[], facts: RunFacts, now = new Date()): string {
  const day = now.toISOString().slice(0, 10);
  const time = now.toISOString().slice(11, 16);
  const file = path.join(RESULTS_DIR, `${day}-${suite.name}.md`);
  const targeted = rows.filter((row) => verdictOf(row) !== undefined);
  const met = targeted.filter((row) => verdictOf(row) === 'meets').length;
  const section = [
    `## ${day} ${time} UTC`,
    '',
    `- Command: \`${facts.command}\``,
    `- Machine: ${facts.machine}`,
    `- Commit: ${facts.commit}`,
    ...(suite.description ? [`- Measured: ${suite.description}`] : []),
    `- Targets met: ${met} of ${targeted.length} (reported, not enforced)`,
    '',
    '```text',
    formatTable(rows).trimEnd(),
    '```',
    '',
  ].join('\n');
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  if (fs.existsSync(file)) fs.appendFileSync(file, `\n${section}`);
  else fs.writeFileSync(file, `# ${suite.name}, ${day}\n\nWritten by \`npm run bench -- ${suite.name} --save\`: one section a run.\n\n${section}`);
  return file;
}
