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
}

export interface CacheSpec {
  key: string;
  path: string;
}

export type SimulatedUser = { kind: 'simulated'; goal: string; prompt: string; harness?: AgentHarness; model?: string };
export type ScriptedUser = { kind: 'scripted'; replies: string[] };
export type EvalUser = SimulatedUser | ScriptedUser;

export interface Validator {
  name: string;
  source: string;
  capture?: boolean;
  manifest?: Array<{ index: number; name: string }>;
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
