/**
 * The benchmark entry: `npm run bench` runs every suite of bench/suites.ts in order,
 * `npm run bench -- appends replay` only those named (and `peers` and `agents`, which run only when named). Each suite's table is printed as it
 * finishes, then one combined table. With `--save`, each suite's table is also written to
 * bench/results/YYYY-MM-DD-<suite>.md with the machine and the command. Targets are reported, not
 * enforced: a missed target still exits 0; only a suite that fails to run (or an unknown name or
 * option) exits non-zero.
 */
import * as path from 'node:path';
import { suites } from './suites';
import { RunFacts, runFacts, saveSuiteResults } from './support/results-file';
import { stderrProgress, Suite } from './support/suite';
import { formatTable, Row, verdictOf } from './support/table';

const OPTIONS = ['--save'];

function selectSuites(names: string[]): Suite[] {
  if (names.length === 0) return suites.filter((suite) => suite.explicit !== true);
  const unknown = names.filter((name) => !suites.some((suite) => suite.name === name));
  if (unknown.length > 0) {
    throw new Error(`Unknown suite(s): ${unknown.join(', ')}. Known: ${suites.map((suite) => suite.name).join(', ')}.`);
  }
  // In registration order, whatever the order on the command line.
  return suites.filter((suite) => names.includes(suite.name));
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const options = args.filter((arg) => arg.startsWith('--'));
  let selected: Suite[];
  try {
    const unknown = options.filter((option) => !OPTIONS.includes(option));
    if (unknown.length > 0) throw new Error(`Unknown option(s): ${unknown.join(', ')}. Known: ${OPTIONS.join(', ')}.`);
    selected = selectSuites(args.filter((arg) => !arg.startsWith('--')));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  // Read before the first suite: the load average is the machine's as the run found it.
  const saving: RunFacts | null = options.includes('--save') ? runFacts(args) : null;
  const all: Row[] = [];
  const failed: string[] = [];
  for (const suite of selected) {
    const progress = stderrProgress(suite.name);
    progress.log('starting');
    try {
      const rows = await suite.run(progress);
      progress.log('done');
      process.stdout.write(`\n== ${suite.name} ==\n${suite.description ? `${suite.description}\n` : ''}${formatTable(rows)}`);
      all.push(...rows);
      if (saving) progress.log(`saved to ${path.relative(process.cwd(), saveSuiteResults(suite, rows, saving))}`);
    } catch (error) {
      failed.push(suite.name);
      progress.log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
  if (all.length > 0) {
    const missed = all.filter((row) => verdictOf(row) === 'misses').length;
    const targeted = all.filter((row) => verdictOf(row) !== undefined).length;
    process.stdout.write(`\n== all suites ==\n${formatTable(all)}`);
    process.stdout.write(`${targeted - missed}/${targeted} targets met${missed > 0 ? ` (${missed} missed; reported, not enforced)` : ''}\n`);
  }
  if (failed.length > 0) {
    process.stderr.write(`Suite(s) that failed to run: ${failed.join(', ')}\n`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
