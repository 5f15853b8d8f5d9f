import type { ConversationEndReason, TrajectoryEntry, TrialArtifact, TrialUsage } from '../execution/trial-runner.port';
import type { ValidationRecord } from '../execution/validation/validation-record';
import type { CostRecord } from '../trials/costs';
import type { TrialEvent } from '../trials/trial.events';

/** The trial as the API shows it, inside its run. */
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

export function queuedTrial(id: string, ordinal: number): TrialView {
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
    trajectory: [],
    verifySteps: [],
    validations: [],
    turns: 0,
    endReason: null,
    startedAt: null,
    finishedAt: null,
  };
}

/** `commands` and `failedCommands` count the trajectory's command entries. */
export function applyTrialEvent(trial: TrialView, event: TrialEvent): TrialView {
  switch (event.type) {
    case 'TrialQueued':
      return trial;
    case 'TrialStarted':
      return { ...trial, status: 'running', startedAt: event.data.startedAt };
    case 'TrialCommandRecorded': {
      const failed = event.data.entry.exitCode !== 0 ? 1 : 0;
      return { ...trial, trajectory: [...trial.trajectory, event.data.entry], commands: trial.commands + 1, failedCommands: trial.failedCommands + failed };
    }
    case 'TrialMessageRecorded':
    case 'TrialPrepared':
      return { ...trial, trajectory: [...trial.trajectory, event.data.entry] };
    case 'TrialConversationEnded': {
      const { entry } = event.data;
      return { ...trial, trajectory: [...trial.trajectory, entry], turns: entry.turns, endReason: entry.endReason };
    }
    case 'TrialVerified':
      return { ...trial, verifySteps: [...trial.verifySteps, { command: event.data.command, exitCode: event.data.exitCode }] };
    case 'TrialValidated':
      return { ...trial, validations: [...trial.validations, event.data.validation] };
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
