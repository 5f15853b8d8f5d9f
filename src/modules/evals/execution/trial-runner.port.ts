import type { CacheSpec, EvalCase, EvalSource, EvalUser, Profile } from '../shared/definitions';
import type { UserModelUse } from './conversation/conversation-user';
import type { JudgeModelUse } from './validation/judge';
import type { ValidationRecord } from './validation/validation-record';

/** Everything one trial needs to run, decided by the saga from the stored batch. */
export interface TrialSpec {
  trialId: string;
  organization: string;
  /** The suite prompt with the case's variables filled in. */
  prompt: string;
  /** The case's source, else the suite's, else empty. */
  source: EvalSource;
  cache: CacheSpec | null;
  profile: Profile | null;
  harness: string;
  model: string;
  /** The variant's sandbox kind, or null for the server's default driver. */
  sandbox: string | null;
  timeoutMs: number;
  verify: string | null;
  /** Organization variables and connector values, given to the harness and verify processes. */
  env: Record<string, string>;
  /** Values to replace with `[redacted]` in everything captured from the trial. */
  secrets: string[];
  /** The case's user: null for a single-turn trial. */
  user: EvalUser | null;
  /** Most user turns, the opening prompt included (the case's, default 8). */
  maxTurns: number;
  /** The case's variables, as the prompt was rendered with them. */
  variables: Record<string, string>;
  validator: EvalCase['validator'];
  prepare: EvalCase['prepare'];
  /** API keys of model providers, by provider name, resolved by the host (server variables or connectors). */
  providerKeys: Record<string, string>;
}

export interface TrajectoryCommand {
  _tag: 'command';
  command: string;
  exitCode: number;
  startedAtMillis: number;
  finishedAtMillis: number;
  output: string;
  outputTruncated: boolean;
}

/** A turn of the conversation: the user's message (turn 1 is the opening prompt) or the agent's answer. */
export interface TrajectoryMessage {
  _tag: 'message';
  role: 'user' | 'agent';
  turn: number;
  text: string;
  /** Epoch milliseconds. */
  at: number;
}

export type ConversationEndReason = 'single-turn' | 'user-done' | 'replies-exhausted' | 'max-turns' | 'timeout' | 'failed';

/** The last entry of a conversation's trajectory: how many agent turns ran and why it ended. */
export interface TrajectoryConversation {
  _tag: 'conversation';
  turns: number;
  endReason: ConversationEndReason;
}

/** The case's prepare, run before the first agent turn: its time and what it returned. */
export interface TrajectoryPrepare {
  _tag: 'prepare';
  name: string;
  durationMs: number;
  /** The returned JSON object (string members became `{{prepare.key}}` prompt variables); null when it returned nothing. */
  result: Record<string, unknown> | null;
}

export type TrajectoryEntry = TrajectoryCommand | TrajectoryMessage | TrajectoryConversation | TrajectoryPrepare;

export interface TrialUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  totalTokens: number;
  costUsd: number | null;
}

export interface TrialArtifact {
  path: string;
  byteSize: number;
  sha256: string;
}

/** What running a trial produced. `status` is the verdict; the saga turns it into events. */
export interface TrialOutcome {
  status: 'passed' | 'failed' | 'void';
  /** The harness's exit code (null when it never ran or was killed). */
  exitCode: number | null;
  /** One line, at most 240 characters, no stack trace; null when verify scored the trial. */
  failure: string | null;
  voidFields: string[];
  /** True when the trial could not run because of the service or its infrastructure. */
  serviceFault: boolean;
  /** The agent was still running at timeoutMs: the trial failed (it is not void). */
  timed: boolean;
  trajectory: TrajectoryEntry[];
  verifySteps: Array<{ command: string; exitCode: number }>;
  /** The validator's records, one per result (absent where no validator ran). */
  validations?: ValidationRecord[];
  /** The judge calls' model use, for the `judge` cost component; absent or null: no judge was called. */
  judgeModel?: JudgeModelUse | null;
  filesChanged: string[];
  artifacts: TrialArtifact[];
  modelMs: number;
  sandboxMs: number;
  sandboxId: string | null;
  usage: TrialUsage | null;
  harnessVersion: string | null;
  /** The sandbox driver the trial ran under; null or absent when no sandbox was made. */
  sandboxDriver?: 'bubblewrap' | 'process' | null;
  /** The harness driver detected an authentication failure (its connectors become invalid). */
  authFailed?: boolean;
  /** Agent turns and why the conversation ended; null or absent when the trial ended before it could. */
  conversation?: { turns: number; endReason: ConversationEndReason } | null;
  /** The simulated user's model use (priced when the configuration has a price); null or absent without one. */
  userModel?: UserModelUse | null;
}

export interface TrialRunner {
  /**
   * Runs one trial to its verdict. It never throws for a trial's own failure. `onOutcome`, when
   * given, receives the outcome as soon as the trial's processes have ended, before the teardown
   * (the trial directory's removal, the trial user given back): the caller can record it and
   * start the next trial meanwhile. The returned promise settles after the teardown.
   */
  run(spec: TrialSpec, signal?: AbortSignal, onOutcome?: (outcome: TrialOutcome) => void): Promise<TrialOutcome>;
}

/** The outcome of a trial voided before anything ran in a sandbox: nothing measured, nothing changed. */
export function voidOutcome(fields: { failure: string; voidFields: string[]; serviceFault: boolean; harnessVersion?: string | null }): TrialOutcome {
  return {
    status: 'void',
    exitCode: null,
    failure: fields.failure,
    voidFields: fields.voidFields,
    serviceFault: fields.serviceFault,
    timed: false,
    trajectory: [],
    verifySteps: [],
    filesChanged: [],
    artifacts: [],
    modelMs: 0,
    sandboxMs: 0,
    sandboxId: null,
    usage: null,
    harnessVersion: fields.harnessVersion ?? null,
  };
}
