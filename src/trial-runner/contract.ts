import type { CacheSpec, EvalCase, EvalSource, EvalUser, Profile } from '#shared/eval-definitions';

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
  /** The recorded calls that answer this trial's model calls (the profile's replay), loaded by the host; absent: none. */
  replay?: ReplaySource | null;
}

/** A recorded batch's model calls, each with its request and answer as the gateway passed them. */
export interface ReplaySource {
  batchId: string;
  mode: 'fallback' | 'strict';
  calls: Array<TrajectoryModelCall & { request: string; response: string }>;
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

/** `agent-cannot-continue`: the agent ended after its first turn because it cannot resume a session without a terminal (cline). */
export type ConversationEndReason = 'single-turn' | 'user-done' | 'replies-exhausted' | 'max-turns' | 'timeout' | 'failed' | 'agent-cannot-continue';

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

/**
 * A call the agent made to its model through the model gateway, metered by the service: its
 * tokens are read from the protocol's own usage fields (input is the uncached part), its times
 * are the gateway's. `turn` is the agent turn it belongs to.
 */
export interface TrajectoryModelCall {
  _tag: 'model-call';
  provider: string;
  model: string;
  protocol: 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
  turn: number;
  stream: boolean;
  /** The HTTP status the agent got (502: the provider could not be reached). */
  status: number;
  startedAtMillis: number;
  finishedAtMillis: number;
  /** From the call to the first byte of a streamed answer; null when not streamed or nothing came. */
  firstTokenMs: number | null;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/**
 * A tool the agent called, as its own output reports it (a built-in agent driver reads it): the
 * input and output redacted and capped like a command's output. `at` is when the driver learned
 * of it, epoch milliseconds.
 */
export interface TrajectoryToolCall {
  _tag: 'tool-call';
  turn: number;
  tool: string;
  input: string;
  /** Null when the agent reported no result (it was interrupted, or its output does not carry one). */
  output: string | null;
  at: number;
}

/** A file the agent added, modified or deleted, as the trial's diff lists it. */
export interface TrialDiffFile {
  path: string;
  change: 'added' | 'modified' | 'deleted';
  bytesBefore: number | null;
  bytesAfter: number | null;
  /** Not valid UTF-8 text (or holds NUL bytes): named with its sizes, never diffed. */
  binary: boolean;
  /** Its change is in the patch; false for binary files, very large ones, and those whose content before was not kept. */
  diffed: boolean;
}

/** The agent's change to its workspace: the files, and a unified diff of the text ones (redacted, capped). */
export interface TrialDiff {
  files: TrialDiffFile[];
  patch: string;
  truncated: boolean;
}

export type TrajectoryEntry = TrajectoryCommand | TrajectoryMessage | TrajectoryConversation | TrajectoryPrepare | TrajectoryModelCall | TrajectoryToolCall;

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
  /** The agent's change as a diff; absent or null when none was made (git could not run, or a runner that reports none). */
  diff?: TrialDiff | null;
  modelMs: number;
  sandboxMs: number;
  sandboxId: string | null;
  usage: TrialUsage | null;
  harnessVersion: string | null;
  /** The sandbox driver the trial ran under; null or absent when no sandbox was made. */
  sandboxDriver?: 'bubblewrap' | 'process' | null;
  /** The harness driver detected an authentication failure (its connectors become invalid). */
  authFailed?: boolean;
  /**
   * With `gateway.recordBodies`, each model call's request and answer (redacted like output), in
   * the order of the trajectory's model-call entries; absent: not recorded.
   */
  modelCallBodies?: ModelCallBodies[];
  /** The connector integration whose key the agent's provider refused through the gateway (that connector is invalid); absent: none. */
  refusedProviderKey?: string | null;
  /** Agent turns and why the conversation ended; null or absent when the trial ended before it could. */
  conversation?: { turns: number; endReason: ConversationEndReason } | null;
  /** The simulated user's model use (priced when the configuration has a price); null or absent without one. */
  userModel?: UserModelUse | null;
  /** The agent's own model calls through the model gateway, priced at the configured prices; absent or null: it used none. */
  agentModel?: AgentModelUse | null;
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

/** What a class of model calls used and cost: the counts every model-use record shares. */
export interface ModelCallTotals {
  provider: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  totalTokens: number;
  /** Priced from the configuration's price table; null when a model has no price there. */
  usd: number | null;
}

/** The simulated user's model use, a cost of its own (never the agent's usage). */
export interface UserModelUse extends ModelCallTotals {
  model: string;
}

/** What the trial's judge calls used and cost, for the trial's `judge` cost component. */
export interface JudgeModelUse extends ModelCallTotals {
  models: string[];
}

/** The spec's Validation record, as a trial reports it (validation/validation-record.ts keeps its bounds). */
export interface Capture {
  text: string;
  format: 'text' | 'json';
  state: 'captured' | 'omitted' | 'empty';
  truncated: boolean;
}

export interface ValidationCall {
  index: number;
  method: 'answer';
  startedAt: number;
  durationMs: number;
  input: Capture;
  output: Capture;
  error: Capture;
}

export interface ValidationLog {
  index: number;
  at: number;
  level: 'stdout' | 'stderr' | 'log';
  value: Capture;
}

/** The usage of a judge call: a trial's usage fields plus the one-hour cache writes. */
export interface JudgmentUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
  totalTokens: number;
  costUsd: number | null;
}

export interface Judgment {
  name: string;
  model: string;
  /** The provider that answered. */
  evaluator: string;
  score: number | null;
  choice: string | null;
  reason: string | null;
  threshold: number;
  durationMs: number;
  error: string | null;
  usage: JudgmentUsage | null;
}

export type ValidationStatus = 'queued' | 'running' | 'passed' | 'failed' | 'error' | 'skipped';

export interface ValidationRecord {
  id: string;
  index: number;
  name: string;
  kind: 'code' | 'judge';
  status: ValidationStatus;
  /** Epoch milliseconds. */
  startedAt: number;
  durationMs: number;
  message: string | null;
  /** The validator process's exit code; null when it was killed or never started. */
  exitCode: number | null;
  /** True when any capture, call or log of the record was cut or dropped. */
  truncated: boolean;
  input: Capture;
  output: Capture;
  error: Capture;
  calls: ValidationCall[];
  logs: ValidationLog[];
  judgment: Judgment | null;
  metadata: Capture;
}

/**
 * The models of the model providers configured in ASSAY_CONFIG (what simulated users and LLM
 * judges call), as evals.models.list shows them next to the harness drivers' own. Built where
 * the configuration is read (execution-host.ts) and given to the list through this token.
 */
export interface ProviderModelEntry {
  id: string;
  displayName: string;
  /** The provider's name in the configuration. */
  vendor: string;
  summary: string;
}

/** What the agent's calls through the model gateway used and cost, for the trial's `model` cost component: the judge's shape. */
export interface AgentModelUse extends JudgeModelUse {
  /** What the agent's own output reported (its driver's usage rule), kept beside the metered figures; null when it reported none. */
  reported?: TrialUsage | null;
}

/** A model call's request and answer bodies as the gateway passed them, redacted; `truncated`: one was cut at the gateway's bound. */
export interface ModelCallBodies {
  request: string;
  response: string;
  truncated: boolean;
}
