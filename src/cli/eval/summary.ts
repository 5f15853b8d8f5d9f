import type { BatchView, CostRecordView, RunView, TrialView } from './batch-view';
import { median, passAtK, wilsonInterval } from '#shared/statistics';
import { groupByVariant, VariantGroup } from './variant-groups';

/** One row of the summary table: a variant definition across the batch's cases. */
export interface VariantSummary {
  label: string;
  trials: number;
  passed: number;
  failed: number;
  void: number;
  passRate: number | null;
  interval: { low: number; high: number } | null;
  passAtK: number | null;
  commandMedian: number | null;
  costs: CostRecordView;
}

function addCosts(runs: RunView[]): CostRecordView {
  const total: CostRecordView = { knownActualUsd: 0, allocatedUsd: 0, estimatedEquivalentUsd: 0, incomplete: false };
  for (const { costs } of runs) {
    total.knownActualUsd += costs.knownActualUsd;
    total.allocatedUsd += costs.allocatedUsd;
    total.estimatedEquivalentUsd += costs.estimatedEquivalentUsd;
    total.incomplete ||= costs.incomplete;
  }
  return total;
}

export function summarizeGroup(group: VariantGroup): VariantSummary {
  const sum = (field: 'passed' | 'failed' | 'voided' | 'trials' | 'scored') => group.runs.reduce((total, run) => total + run.distribution[field], 0);
  const passed = sum('passed');
  const scored = sum('scored');
  return {
    label: group.label,
    trials: sum('trials'),
    passed,
    failed: sum('failed'),
    void: sum('voided'),
    passRate: scored > 0 ? passed / scored : null,
    interval: wilsonInterval(passed, scored),
    passAtK: passAtK(group.runs.map((run) => ({ passed: run.distribution.passed, scored: run.distribution.scored }))),
    commandMedian: median(group.runs.map((run) => run.distribution.commandMedian)),
    costs: addCosts(group.runs),
  };
}

const percent = (value: number) => `${(value * 100).toFixed(0)}%`;
const usd = (value: number) => `$${value.toFixed(4)}`;

function formatCost(costs: CostRecordView): string {
  const known = costs.knownActualUsd + costs.allocatedUsd;
  const estimate = costs.estimatedEquivalentUsd > 0 ? ` ~${usd(costs.estimatedEquivalentUsd)}` : '';
  return `${usd(known)}${estimate}${costs.incomplete ? ' +?' : ''}`;
}

function row(summary: VariantSummary): string[] {
  const rate =
    summary.passRate === null || !summary.interval ? '-' : `${percent(summary.passRate)} [${percent(summary.interval.low)}, ${percent(summary.interval.high)}]`;
  return [
    summary.label,
    String(summary.trials),
    String(summary.passed),
    String(summary.failed),
    String(summary.void),
    rate,
    summary.passAtK === null ? '-' : percent(summary.passAtK),
    summary.commandMedian === null ? '-' : String(summary.commandMedian),
    formatCost(summary.costs),
  ];
}

/** Columns padded to their widest cell; numbers right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((cells) => cells[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

/** The table of variants; k is the trials of each run. */
export function summaryTable(batch: BatchView, k: number): string {
  const header = ['variant', 'trials', 'passed', 'failed', 'void', 'pass rate [95% CI]', `pass@${k}`, 'commands (median)', 'cost'];
  return table(header, groupByVariant(batch.runs).map(summarizeGroup).map(row));
}

const TAIL_LINES = 6;

function tail(text: string): string[] {
  return text.trimEnd().split('\n').slice(-TAIL_LINES);
}

/** A command as one line: a script loaded from a verifyFile shows its first line. */
function oneLine(command: string): string {
  const lines = command.trim().split('\n');
  return lines.length > 1 ? `${lines[0]} …` : lines[0];
}

/** Why a trial did not pass, in a few lines: the void reason, or the verify step and the last output. */
export function failureTail(trial: TrialView): string[] {
  if (trial.status === 'void') return [`void: ${trial.failure ?? 'no reason recorded'}`];
  const lines: string[] = [];
  if (trial.timed) lines.push('the agent ran out of time');
  const verify = trial.verifySteps?.at(-1);
  if (verify) lines.push(`verify \`${oneLine(verify.command)}\` exited ${verify.exitCode ?? 'without a code'}`);
  else if (trial.failure) lines.push(trial.failure);
  const output = trial.trajectory?.filter((entry) => entry._tag === 'command' && entry.output).at(-1)?.output;
  if (output) lines.push(...tail(output).map((line) => `| ${line}`));
  return lines.length > 0 ? lines : ['failed'];
}

const seeIt = (url: string, runId: string) =>
  `    see it: curl -s -X POST ${url}/v1/evals.runs.get -H "authorization: Bearer $ASSAY_API_KEY" -H 'content-type: application/json' -d '{"id": "${runId}"}'`;

/** The runs with a failed trial (and, under `strict`, a void one), each with its tail and the command to read it. */
export function failingCases(batch: BatchView, url: string, includeVoid: boolean): string {
  const labels = new Map(groupByVariant(batch.runs).flatMap((group) => group.runs.map((run) => [run.id, group.label] as const)));
  const blocks: string[] = [];
  for (const run of batch.runs) {
    const bad = run.trials.filter((trial) => trial.status === 'failed' || (includeVoid && trial.status === 'void'));
    if (bad.length === 0 && run.status !== 'failed') continue;
    const ids = run.retriedIn ? [run.id, run.retriedIn] : [run.id];
    const lines = [`✗ ${run.case.id} on ${labels.get(run.id) ?? run.variant.id} (${ids.join(', ')})`];
    if (run.status === 'failed') lines.push(`    run failed: ${run.failure ?? 'no reason recorded'}`);
    for (const trial of bad) {
      lines.push(`    trial ${trial.ordinal} ${trial.status}:`);
      lines.push(...failureTail(trial).map((line) => `      ${line}`));
    }
    lines.push(...ids.map((id) => seeIt(url, id)));
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n');
}

const CASES_SHOWN = 5;

/**
 * The void trials' reasons, one line per reason with how many trials gave it and the cases
 * they were of, most frequent first: what broke, whatever the gate.
 */
export function voidReasons(batch: BatchView): string {
  const reasons = new Map<string, { trials: number; cases: Set<string> }>();
  for (const run of batch.runs) {
    for (const trial of run.trials) {
      if (trial.status !== 'void') continue;
      const reason = trial.failure ?? 'no reason recorded';
      const entry = reasons.get(reason) ?? { trials: 0, cases: new Set<string>() };
      entry.trials += 1;
      entry.cases.add(run.case.id);
      reasons.set(reason, entry);
    }
  }
  return [...reasons.entries()]
    .sort(([, a], [, b]) => b.trials - a.trials)
    .map(([reason, { trials, cases }]) => {
      const ids = [...cases];
      const more = ids.length > CASES_SHOWN ? ` and ${ids.length - CASES_SHOWN} more` : '';
      return `  ${trials} × ${reason} (${ids.slice(0, CASES_SHOWN).join(', ')}${more})`;
    })
    .join('\n');
}
