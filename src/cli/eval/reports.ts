import * as fs from 'node:fs';
import type { BatchView } from './batch-view';
import { writeJunit } from './junit';

/** What a suite's run leaves for the JSON and JUnit files. */
export interface SuiteReport {
  name: string;
  suiteId: string;
  /** The batches that ran, as evals.batches.get answered at their end. */
  batches: BatchView[];
  /** All of them as one (merged with the original batch under --retry-void); null when none ran to its end. */
  view: BatchView | null;
  retryOf: string | null;
  /** Whether the suite ran as several batches (or again): its JSON is `{batches: [...]}`. */
  several: boolean;
}

/**
 * A suite in the JSON file: its batch as evals.batches.get answers it; a suite run as several
 * batches (or under --retry-void) as `{name, suite, batches: [...]}` (and `retryOf`).
 */
function jsonOf(report: SuiteReport): unknown {
  if (!report.several) return report.batches[0] ?? null;
  return { name: report.name, suite: report.suiteId, ...(report.retryOf ? { retryOf: report.retryOf } : {}), batches: report.batches };
}

/** The JUnit file (one testsuite per variant of each suite, over all its batches) and the JSON file (a list for several files). */
export function writeReports(flags: { junit?: string; json?: string }, reports: SuiteReport[], files: number): void {
  if (flags.junit)
    writeJunit(
      flags.junit,
      reports.flatMap((report) => (report.view ? [{ name: report.name, batch: report.view }] : [])),
    );
  if (flags.json) {
    const entries = reports.map(jsonOf);
    fs.writeFileSync(flags.json, `${JSON.stringify(files === 1 ? (entries[0] ?? null) : entries, null, 2)}\n`);
  }
}
