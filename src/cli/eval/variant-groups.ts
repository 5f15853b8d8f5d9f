import { variantLabel } from '#shared/variant-label';
import type { RunView } from './batch-view';

/**
 * The runs of one variant definition. A batch gives each case its own variant id (the id
 * folds in the case's simulated user), so the summary groups runs by what the user wrote in
 * `variants`: the harness, the model and the profile.
 */
export interface VariantGroup {
  label: string;
  runs: RunView[];
}

function definitionKey(variant: RunView['variant']): string {
  return JSON.stringify([variant.harness, variant.model, variant.profile ?? null]);
}

/** The one naming of variants the viewer, the report and the analytics share (variant-label.ts). */
function baseLabel(variant: RunView['variant']): string {
  return variantLabel(variant);
}

/** The groups in the order of their first run (the batch's order), each with a distinct label. */
export function groupByVariant(runs: RunView[]): VariantGroup[] {
  const groups = new Map<string, VariantGroup>();
  for (const run of runs) {
    const key = definitionKey(run.variant);
    const group = groups.get(key) ?? { label: baseLabel(run.variant), runs: [] };
    group.runs.push(run);
    groups.set(key, group);
  }
  const list = [...groups.values()];
  // Two unnamed profiles on the same harness and model: number them so the rows can be told apart.
  const seen = new Map<string, number>();
  for (const group of list) {
    const count = (seen.get(group.label) ?? 0) + 1;
    seen.set(group.label, count);
    if (count > 1) group.label = `${group.label} #${count}`;
  }
  return list;
}

export interface GroupCounts {
  total: number;
  done: number;
  passed: number;
  failed: number;
  void: number;
}

/** Trials of a group by state, from the trials themselves (the distribution counts only settled ones). */
export function countTrials(runs: RunView[]): GroupCounts {
  const counts: GroupCounts = { total: 0, done: 0, passed: 0, failed: 0, void: 0 };
  for (const run of runs) {
    counts.total += Math.max(run.trials.length, run.distribution.trials);
    for (const trial of run.trials) {
      if (trial.status === 'passed') counts.passed += 1;
      else if (trial.status === 'failed') counts.failed += 1;
      else if (trial.status === 'void') counts.void += 1;
    }
  }
  counts.done = counts.passed + counts.failed + counts.void;
  return counts;
}
