import { median } from '#shared/statistics';
import { ApiRefusal, AssayApi } from './api-client';
import type { BatchView, RunView, TrialView } from './batch-view';
import { EXIT } from './exit-codes';
import type { PreparedSuite } from './prepare-suite';
import { splitByCase } from './split-suite';
import { StartRefused } from './start-batch';
import { isVariant } from './suite-view';

type Json = Record<string, unknown>;

/** The void trials of a batch to run again: the batches that do, and what could not be run again. */
export interface RetryPlan {
  original: BatchView;
  parts: Json[];
  /** Runs with void trials whose case or variant the suite file no longer has (or --filter, --tag left out). */
  notRetried: RunView[];
}

const voidTrials = (run: RunView) => run.trials.filter((trial) => trial.status === 'void').length;

/**
 * Reads the batch and plans to run again each case × variant pair with void trials, as many
 * trials as were void, from the suite file's definitions: the cases with the same void variants
 * and count go in one batch (split by case when it is over a batch's size).
 */
export async function planRetry(api: AssayApi, batchId: string, suite: PreparedSuite): Promise<RetryPlan> {
  const original = await endedBatch(api, batchId);
  // A run names the suite its batch ran (docs/api.md, "Run").
  const ranSuite = suiteOf(original)?.id;
  if (ranSuite !== undefined && ranSuite !== suite.suiteId) {
    throw new StartRefused(
      EXIT.usage,
      `--retry-void: batch ${batchId} ran the suite "${ranSuite}", and ${suite.file.shownAs} is the suite "${suite.suiteId}"; give the file of the suite it ran.`,
    );
  }
  const cases = (suite.body.cases ?? []) as Json[];
  const variants = (suite.body.variants ?? []) as Json[];
  const groups = new Map<string, { trials: number; variants: number[]; cases: Json[] }>();
  const notRetried: RunView[] = [];
  for (const [caseId, runs] of voidRunsByCase(original)) {
    const evalCase = cases.find((candidate) => candidate.id === caseId);
    for (const run of runs) {
      const variant = variants.findIndex((definition) => isVariant(run.variant, definition));
      if (!evalCase || variant < 0) notRetried.push(run);
    }
    if (!evalCase) continue;
    // Per case, its void variants by how many trials each lost; a group runs them together.
    const byCount = new Map<number, number[]>();
    for (const run of runs) {
      const variant = variants.findIndex((definition) => isVariant(run.variant, definition));
      if (variant >= 0) byCount.set(voidTrials(run), [...(byCount.get(voidTrials(run)) ?? []), variant]);
    }
    for (const [trials, indexes] of byCount) {
      const key = `${trials}:${indexes.join(',')}`;
      const group = groups.get(key) ?? { trials, variants: indexes, cases: [] };
      group.cases.push(evalCase);
      groups.set(key, group);
    }
  }
  const parts = [...groups.values()].flatMap((group) =>
    splitByCase({ ...suite.body, cases: group.cases, variants: group.variants.map((index) => variants[index]), trials: group.trials }).map((part) => part.body),
  );
  return { original, parts, notRetried };
}

/** The batch as evals.batches.get answers it, once it ended: a running batch's void trials are not all known yet. */
async function endedBatch(api: AssayApi, batchId: string): Promise<BatchView> {
  const answer = await api.call('evals.batches.get', { id: batchId });
  if (answer.status === 404) throw new StartRefused(EXIT.usage, `--retry-void: this organization has no batch ${batchId}.`);
  if (answer.status !== 200) throw new StartRefused(EXIT.usage, `--retry-void: ${new ApiRefusal('evals.batches.get', answer.status, answer.body).message}`);
  const original = answer.body as BatchView;
  if (original.status === 'running') {
    throw new StartRefused(EXIT.usage, `--retry-void: batch ${batchId} is still running; run its void trials again once it ended.`);
  }
  return original;
}

/** The suite a batch ran, as its runs name it. */
export const suiteOf = (batch: BatchView): { id: string; name: string } | undefined => batch.runs[0]?.suite;

/** A run of stored cases again (`evals.cases.run`), and the body the progress view counts its runs by. */
export interface StoredCaseRun {
  request: { id: string; trials: number; variants: string[] };
  body: Json;
}

/** Without the suite file: the void trials run again as the server keeps their cases, and what could not be. */
export interface StoredRetryPlan {
  original: BatchView;
  parts: StoredCaseRun[];
  notRetried: Array<{ run: RunView; why: string }>;
  /** Cases whose newest version is not the one the batch ran: the retry runs the newest. */
  changed: string[];
}

/**
 * `--retry-void BATCH` without a suite file: each case with void trials runs again from its
 * stored newest version (`evals.cases.run`), on the variants that lost trials, as many trials as
 * each lost (variants that lost as many share a batch). A run made on the user's machine (local)
 * cannot: its variant is not the server's to run, and its file is needed.
 */
export async function planStoredRetry(api: AssayApi, batchId: string): Promise<StoredRetryPlan> {
  const original = await endedBatch(api, batchId);
  const parts: StoredCaseRun[] = [];
  const notRetried: StoredRetryPlan['notRetried'] = [];
  const changed: string[] = [];
  for (const [caseId, runs] of voidRunsByCase(original)) {
    const here = runs.filter((run) => run.local || original.local);
    for (const run of here) notRetried.push({ run, why: 'it ran on a machine of its own (local mode): give its suite file to run it again there' });
    const onServer = runs.filter((run) => !here.includes(run));
    if (onServer.length === 0) continue;
    const stored = await api.call('evals.cases.get', { id: caseId });
    if (stored.status !== 200) {
      for (const run of onServer) notRetried.push({ run, why: `the server has no such case now (evals.cases.get answered ${stored.status})` });
      continue;
    }
    // evals.cases.get lists a case's versions newest first.
    const newest = (stored.body as { versions?: Array<{ definitionHash: string }> }).versions?.[0]?.definitionHash;
    if (newest !== undefined && onServer.some((run) => run.definitionHash !== undefined && run.definitionHash !== newest)) changed.push(caseId);
    const byCount = new Map<number, RunView[]>();
    for (const run of onServer) byCount.set(voidTrials(run), [...(byCount.get(voidTrials(run)) ?? []), run]);
    for (const [trials, group] of byCount) {
      parts.push({
        request: { id: caseId, trials, variants: group.map((run) => run.variant.id) },
        body: { cases: [{ id: caseId }], variants: group.map((run) => run.variant), trials },
      });
    }
  }
  return { original, parts, notRetried, changed };
}

function voidRunsByCase(batch: BatchView): Map<string, RunView[]> {
  const byCase = new Map<string, RunView[]>();
  for (const run of batch.runs) if (voidTrials(run) > 0) byCase.set(run.case.id, [...(byCase.get(run.case.id) ?? []), run]);
  return byCase;
}

/**
 * The original batch with each run whose void trials ran again holding its trials that were
 * not void and those of the run that ran them again, counted again: the result as if the
 * void trials had been scored (or voided again) in the first place.
 */
export function mergeRetry(original: BatchView, retried: BatchView[]): BatchView {
  const newRuns = retried.flatMap((batch) => batch.runs);
  const runs = original.runs.map((run) => {
    const again = voidTrials(run) > 0 ? newRuns.find((candidate) => candidate.case.id === run.case.id && sameVariant(candidate, run)) : undefined;
    return again ? mergeRun(run, again) : run;
  });
  const failed = retried.find((batch) => batch.status === 'failed');
  return {
    ...original,
    id: [original.id, ...retried.map((batch) => batch.id)].join(', '),
    status: failed ? 'failed' : original.status,
    failure: failed?.failure ?? original.failure,
    runs,
  };
}

const sameVariant = (a: RunView, b: RunView) => isVariant(a.variant, b.variant);

function mergeRun(run: RunView, again: RunView): RunView {
  const trials: TrialView[] = [...run.trials.filter((trial) => trial.status !== 'void'), ...again.trials].map((trial, index) => ({
    ...trial,
    ordinal: index + 1,
  }));
  const count = (status: TrialView['status']) => trials.filter((trial) => trial.status === status).length;
  const passed = count('passed');
  const failed = count('failed');
  const commands = trials.flatMap((trial) =>
    (trial.status === 'passed' || trial.status === 'failed') && trial.commands !== undefined ? [trial.commands] : [],
  );
  return {
    ...run,
    status: again.status,
    failure: again.failure,
    retriedIn: again.id,
    trials,
    distribution: { trials: trials.length, passed, failed, voided: count('void'), scored: passed + failed, commandMedian: median(commands) },
    costs: {
      knownActualUsd: run.costs.knownActualUsd + again.costs.knownActualUsd,
      allocatedUsd: run.costs.allocatedUsd + again.costs.allocatedUsd,
      estimatedEquivalentUsd: run.costs.estimatedEquivalentUsd + again.costs.estimatedEquivalentUsd,
      incomplete: run.costs.incomplete || again.costs.incomplete,
    },
  };
}
