import { variantLabel } from '#shared/variant-label';
import type { AssayApi } from './api-client';
import type { PreparedSuite } from './prepare-suite';
import type { SuiteReport } from './reports';
import { mergeRetry, planRetry, planStoredRetry, suiteOf } from './retry-void';
import type { SuiteOutcome, SuiteRun } from './run-suite';
import { runStoredCase } from './start-batch';
import { plannedLine, retryLine } from './suite-report';

type Json = Record<string, unknown>;

/** A suite ready to run, and how its outcome is reported in the JSON and JUnit files. */
export interface PlannedSuite {
  plan: SuiteRun;
  report: (outcome: SuiteOutcome) => SuiteReport;
}

/**
 * The batches a prepared suite runs: its parts; or, under --retry-void, the void pairs of that
 * batch (read from the server), whose summary merges in the batch's other trials.
 */
export async function suiteRun(suite: PreparedSuite, api: AssayApi, retryVoid: string | undefined): Promise<PlannedSuite> {
  const base = {
    name: suite.name,
    shownAs: suite.file.shownAs,
    local: suite.local,
    env: suite.env,
    k: suite.trials,
  };
  if (retryVoid === undefined) {
    const parts = suite.parts.map((part) => part.body);
    const plan: SuiteRun = {
      ...base,
      parts,
      intro: parts.length > 1 ? [plannedLine(suite.name, parts)] : [],
      problemAt: (part, at, message) => problemAt(suite, parts[part], at, message),
    };
    return {
      plan,
      report: (outcome) => ({
        name: suite.name,
        suiteId: suite.suiteId,
        batches: outcome.batches,
        view: outcome.view,
        retryOf: null,
        several: parts.length > 1,
      }),
    };
  }
  const retry = await planRetry(api, retryVoid, suite);
  const intro = [retryLine(suite.name, retryVoid, retry.parts)];
  for (const run of retry.notRetried)
    intro.push(
      `  not run again: ${run.case.id} on ${variantLabel(run.variant)} (its case or variant is not in ${suite.file.shownAs}, or --filter or --tag left it out)`,
    );
  const k = Math.max(...retry.original.runs.map((run) => run.trials.length), 1);
  const plan: SuiteRun = {
    ...base,
    k,
    parts: retry.parts,
    intro,
    problemAt: (part, at, message) => problemAt(suite, retry.parts[part], at, message),
    retry: { batchId: retryVoid, merge: (batches) => mergeRetry(retry.original, batches), original: retry.original },
  };
  return {
    plan,
    report: (outcome) => ({ name: suite.name, suiteId: suite.suiteId, batches: outcome.batches, view: outcome.view, retryOf: retryVoid, several: true }),
  };
}

/**
 * `--retry-void BATCH` without a suite file: the void pairs run again from the cases as the server
 * stores them (their newest versions), each case through evals.cases.run.
 */
export async function storedRetryRun(api: AssayApi, batchId: string): Promise<PlannedSuite> {
  const retry = await planStoredRetry(api, batchId);
  const suite = suiteOf(retry.original);
  const name = suite?.name ?? batchId;
  const parts = retry.parts.map((part) => part.body);
  const intro = [retryLine(name, batchId, parts, '')];
  for (const caseId of retry.changed) intro.push(`  ${caseId} changed since batch ${batchId}: its newest version runs`);
  for (const { run, why } of retry.notRetried) intro.push(`  not run again: ${run.case.id} on ${variantLabel(run.variant)} (${why})`);
  const plan: SuiteRun = {
    name,
    shownAs: `batch ${batchId}`,
    local: false,
    env: [],
    k: Math.max(...retry.original.runs.map((run) => run.trials.length), 1),
    parts,
    intro,
    problemAt: (_part, at, message) => `${at.join('.')}: ${message}`,
    retry: { batchId, merge: (batches) => mergeRetry(retry.original, batches), original: retry.original },
    start: (part, context) => runStoredCase(retry.parts[part].request, context),
  };
  return {
    plan,
    report: (outcome) => ({ name, suiteId: suite?.id ?? '', batches: outcome.batches, view: outcome.view, retryOf: batchId, several: true }),
  };
}

/** A path of a part's body as the suite file names it: a part's case is found by its id among the suite's. */
function problemAt(suite: PreparedSuite, part: Json, at: Array<string | number>, message: string): string {
  if (at[0] !== 'cases' || typeof at[1] !== 'number') return suite.file.problem(at, message).text;
  const caseId = ((part.cases as Array<{ id?: unknown }>)[at[1]] as { id?: unknown } | undefined)?.id;
  const index = (suite.body.cases as Array<{ id?: unknown }>).findIndex((evalCase) => evalCase.id === caseId);
  return suite.file.problem(index >= 0 ? ['cases', index, ...at.slice(2)] : at, message).text;
}
