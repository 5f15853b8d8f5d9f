/**
 * The eval definitions as stored in events and handed to the trial runner: plain data, the
 * request forms of the spec after validation and defaults.
 */

export const AGENT_HARNESSES = [
  'harness_kind_1',
  'harness_kind_2',
  'harness_kind_3',
  'harness_kind_4',
  'harness_kind_5',
  'harness_kind_6',
  'harness_kind_7',
  'harness_kind_8',
] as const;
export const HARNESSES = [...AGENT_HARNESSES, 'command'] as const;
export const REMOTE_SANDBOXES = ['sandbox_kind_1', 'sandbox_kind_2', 'sandbox_kind_3', 'sandbox_kind_4', 'sandbox_kind_5', 'sandbox_kind_6'] as const;
export const SANDBOXES = [...REMOTE_SANDBOXES, 'local'] as const;

export type AgentHarness = (typeof AGENT_HARNESSES)[number];
export type Harness = (typeof HARNESSES)[number];
export type Sandbox = (typeof SANDBOXES)[number];

export type EvalSource = { kind: 'empty' } | { kind: 'repo'; url: string; ref: string | null } | { kind: 'files'; files: Record<string, string> };

export interface Profile {
  name?: string;
  install?: string;
  run?: string;
  env?: Record<string, string>;
  files?: Record<string, string>;
  /** The command harness's model provider (a name in ASSAY_CONFIG providers), reached through the model gateway. */
  provider?: string;
  /** What the agent may spend through the model gateway; a call past it is refused and the trial fails. */
  budget?: ModelBudget;
  /** Answer the agent's model calls from a batch recorded with gateway.recordBodies. */
  replay?: ModelReplay;
}

/**
 * Model calls answered from a recorded batch: a call whose request matches a recorded one gets
 * its recorded answer; `fallback` sends any other upstream, `strict` refuses it (the trial is void).
 */
export interface ModelReplay {
  batchId: string;
  mode: 'fallback' | 'strict';
}

/** A trial's model budget: each bound optional. */
export interface ModelBudget {
  maxModelCalls?: number;
  maxTokens?: number;
  maxUsd?: number;
}

/** The bounds of a model budget's fields. */
export const MAX_BUDGET_CALLS = 100_000;
export const MAX_BUDGET_TOKENS = 1_000_000_000;
export const MAX_BUDGET_USD = 100_000;

export interface CacheSpec {
  key: string;
  path: string;
}

export type SimulatedUser = { kind: 'simulated'; goal: string; prompt: string; harness?: AgentHarness; model?: string };
export type ScriptedUser = { kind: 'scripted'; replies: string[] };
export type EvalUser = SimulatedUser | ScriptedUser;

/** The spec's first form: a bundled module exporting the function `name`. */
export interface CodeValidator {
  kind?: 'code';
  name: string;
  source: string;
  capture?: boolean;
  manifest?: Array<{ index: number; name: string }>;
  /** The module as its author wrote it, beside the bundle in `source` (the CLI sends both): what a run shows, never what runs. */
  written?: { path: string; content: string };
}

/** An LLM judge: a rubric the judge model answers with one of `choices` (label to score). */
export interface JudgeValidator {
  kind: 'judge';
  name: string;
  prompt: string;
  model?: string;
  choices?: Record<string, number>;
  threshold?: number;
  files?: string[];
}

export type Validator = CodeValidator | JudgeValidator;

export const DEFAULT_JUDGE_CHOICES: Record<string, number> = { pass: 1, fail: 0 };
export const DEFAULT_JUDGE_THRESHOLD = 0.5;

/** What a run records as its validator: a code validator's source, or the judge form as JSON. */
export function validatorText(validator: Validator | null): string | null {
  if (validator === null) return null;
  return validator.kind === 'judge' ? JSON.stringify(validator) : validator.source;
}

export interface EvalCase {
  id: string;
  name: string;
  cache: CacheSpec | null;
  maxTurns: number | null;
  timeoutMs: number | null;
  user: EvalUser | null;
  prepare: { name: string; source: string } | null;
  source: EvalSource | null;
  tags: string[];
  variables: Record<string, string>;
  validator: Validator | null;
  verify: string | null;
}

export interface EvalSuite {
  id: string;
  name: string;
  prompt: string;
  source: EvalSource | null;
}

export interface VariantDefinition {
  harness: Harness;
  model: string;
  profile: Profile | null;
  sandbox: Sandbox | null;
  credentials: { harnessConnectionId?: string; sandboxConnectionId?: string } | null;
}

export const DEFAULT_TIMEOUT_MS = 900_000;
export const DEFAULT_MAX_TURNS = 8;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/** The names of the `{{name}}` placeholders of a prompt, in order of first use. */
export function placeholders(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(PLACEHOLDER)].map((match) => match[1]))];
}

/** The suite prompt with the case's variables filled in. */
export function renderPrompt(prompt: string, variables: Record<string, string>): string {
  return prompt.replace(PLACEHOLDER, (whole, name: string) => (name in variables ? variables[name] : whole));
}
