/**
 * The benchmark entry: `npm run bench` runs every suite of bench/suites.ts in order,
 * `npm run bench -- appends replay` only those named (and `peers`, which runs only when named). Each suite's table is printed as it
 * finishes, then one combined table. Targets are reported, not enforced: a missed target still
 * exits 0; only a suite that fails to run (or an unknown name) exits non-zero.
 */
import { suites } from './suites';
import { stderrProgress, Suite } from './support/suite';
import { formatTable, Row, verdictOf } from './support/table';

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
  let selected: Suite[];
  try {
    selected = selectSuites(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
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
