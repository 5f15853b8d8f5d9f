import type { BatchView } from './batch-view';
import type { FailOn } from './exit-codes';
import { failingCases, summaryTable, voidReasons } from './summary';

type Json = Record<string, unknown>;

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
const batchCount = (count: number) => `${count} ${count === 1 ? 'batch' : 'batches'}`;

/** `textkit: 2 batches (17 cases × 2 variants × 3 trials = 102 trials)`: what a suite split into batches will run. */
export function plannedLine(name: string, parts: Json[]): string {
  const body = parts[0];
  const cases = parts.reduce((total, part) => total + (part.cases as unknown[]).length, 0);
  const variants = (body.variants as unknown[]).length;
  const trials = body.trials as number;
  return `${name}: ${batchCount(parts.length)} (${plural(cases, 'case')} × ${plural(variants, 'variant')} × ${plural(trials, 'trial')} = ${cases * variants * trials} trials)`;
}

/** `--retry-void`: how many trials run again, in how many batches. */
export function retryLine(name: string, batchId: string, parts: Json[], source = ' of this suite file'): string {
  const trials = parts.reduce((total, part) => total + (part.cases as unknown[]).length * (part.variants as unknown[]).length * (part.trials as number), 0);
  if (parts.length === 0) return `${name}: batch ${batchId} has no void trial${source} to run again`;
  return `${name}: running the ${trials} void trials of batch ${batchId} again, in ${batchCount(parts.length)}`;
}

export interface SummaryInput {
  name: string;
  /** The batches that ran, each as it ended. */
  batches: BatchView[];
  /** All of them as one (merged with the original batch under --retry-void). */
  view: BatchView;
  retryOf: string | null;
  url: string;
  failOn: FailOn;
  /** The trials of each run: the k of pass@k. */
  k: number;
}

/**
 * The end of a suite: how each batch ended, the table of variants, the failing cases, and the
 * void trials' reasons by message (whatever the gate: a void trial measured nothing).
 */
export function summaryLines(input: SummaryInput): string[] {
  const { name, batches, view, retryOf } = input;
  const ended = (batch: BatchView) => `batch ${batch.id} ${batch.status}${batch.failure ? `: ${batch.failure}` : ''}`;
  const merged = retryOf ? `, merged with the trials of batch ${retryOf} that were not void` : '';
  const header = batches.length > 0 ? `${name}: ${batches.map(ended).join(', ')}${merged}` : `${name}: ${ended(view)}`;
  const lines = ['', header, summaryTable(view, input.k)];
  const failing = failingCases(view, input.url, input.failOn === 'strict');
  if (failing) lines.push('', 'Failing cases:', failing);
  const reasons = voidReasons(view);
  if (reasons) {
    const count = view.runs.reduce((total, run) => total + run.trials.filter((trial) => trial.status === 'void').length, 0);
    lines.push('', `Void trials (${count}), by reason:`, reasons);
    const scored = view.runs.some((run) => run.trials.some((trial) => trial.status === 'passed' || trial.status === 'failed'));
    if (!scored) lines.push('', 'Nothing was measured: no trial was scored, so no gate can pass (exit 3 unless --fail-on never).');
  }
  return lines;
}
