import type { ConversationEndReason, TrajectoryEntry, TrialArtifact, TrialUsage } from '#trial-runner';
import type { ValidationRecord } from '#trial-runner';
import type { CostRecord } from '../trials/costs';
import type { TrialEvent } from '../trials/trial.events';
import { merged } from '#shared/merged';

/** The trial as the API shows it, inside its run: its summary joined with its detail. */
export type TrialView = {
  id: string;
  ordinal: number;
  status: 'queued' | 'running' | 'passed' | 'failed' | 'void';
  timed: boolean;
  exitCode: number | null;
  commands: number;
  failedCommands: number;
  modelMs: number;
  sandboxMs: number;
  sandboxId: string | null;
  filesChanged: string[];
  failure: string | null;
  voidFields: string[];
  costs: CostRecord | null;
  usage: TrialUsage | null;
  artifacts: TrialArtifact[];
  trajectory: TrajectoryEntry[];
  verifySteps: Array<{ command: string; exitCode: number }>;
  validations: ValidationRecord[];
  /** Agent turns run; 0 until the trial ends. */
  turns: number;
  /** Why the conversation ended; null until it did (and for trials recorded before conversations). */
  endReason: ConversationEndReason | null;
  startedAt: string | null;
  finishedAt: string | null;
};

/** What a trial records step by step: kept in trial detail documents (trial-detail.projection.ts), not in the run. */
export type TrialDetail = Pick<TrialView, 'trajectory' | 'verifySteps' | 'validations'>;

/**
 * The trial as its run document keeps it: status, timings, counts, costs and failure, bounded
 * whatever the trial printed. Documents stored before the split also carry the detail fields.
 */
export type TrialSummary = Omit<TrialView, keyof TrialDetail> & Partial<TrialDetail>;

export function queuedTrial(id: string, ordinal: number): TrialSummary {
  return {
    id,
    ordinal,
    status: 'queued',
    timed: false,
    exitCode: null,
    commands: 0,
    failedCommands: 0,
    modelMs: 0,
    sandboxMs: 0,
    sandboxId: null,
    filesChanged: [],
    failure: null,
    voidFields: [],
    costs: null,
    usage: null,
    artifacts: [],
    turns: 0,
    endReason: null,
    startedAt: null,
    finishedAt: null,
  };
}

/** The trial as the API shows it, in the order of its fields; a summary stored before the split brings its own detail. */
export function trialView(summary: TrialSummary, detail: TrialDetail | undefined): TrialView {
  const { trajectory, verifySteps, validations, turns, endReason, startedAt, finishedAt, ...counts } = summary;
  const steps = detail ?? { trajectory: trajectory ?? [], verifySteps: verifySteps ?? [], validations: validations ?? [] };
  return merged(counts, steps, { turns, endReason, startedAt, finishedAt });
}

/** `commands` and `failedCommands` count the trajectory's command entries; the entries themselves are trial detail. */
export function applyTrialEvent(trial: TrialSummary, event: TrialEvent): TrialSummary {
  switch (event.type) {
    case 'TrialQueued':
      return trial;
    case 'TrialStarted':
      return { ...trial, status: 'running', startedAt: event.data.startedAt };
    case 'TrialCommandRecorded': {
      const failed = event.data.entry.exitCode !== 0 ? 1 : 0;
      return { ...trial, commands: trial.commands + 1, failedCommands: trial.failedCommands + failed };
    }
    case 'TrialMessageRecorded':
    case 'TrialPrepared':
    case 'TrialModelCalled':
    case 'TrialToolCalled':
    case 'TrialDiffRecorded':
    case 'TrialVerified':
    case 'TrialValidated':
      return trial;
    case 'TrialConversationEnded': {
      const { entry } = event.data;
      return { ...trial, turns: entry.turns, endReason: entry.endReason };
    }
    case 'TrialScored':
    case 'TrialVoided': {
      const data = event.data;
      const voided =
        event.type === 'TrialVoided'
          ? { failure: event.data.failure, voidFields: event.data.voidFields }
          : { failure: event.data.failure ?? null, voidFields: [] };
      return {
        ...trial,
        status: event.type === 'TrialVoided' ? 'void' : event.data.status,
        timed: data.timed,
        exitCode: data.exitCode,
        modelMs: data.modelMs,
        sandboxMs: data.sandboxMs,
        sandboxId: data.sandboxId,
        filesChanged: data.filesChanged,
        artifacts: data.artifacts,
        usage: data.usage,
        costs: data.costs,
        finishedAt: data.finishedAt,
        ...voided,
      };
    }
  }
}
