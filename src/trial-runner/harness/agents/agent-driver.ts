import type { ProviderProtocol } from '../../providers/provider-config';
import type { WireProtocol } from '../../gateway/protocols';
import type { TrialUsage } from '../../contract';

/** The agent CLIs Assay drives itself: `harnesses.<kind>.agent`. */
export const AGENT_NAMES = ['claude-code', 'codex', 'gemini-cli', 'opencode', 'qwen-code', 'pi', 'copilot', 'cline', 'continue'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** What a driver knows of its trial when it writes its settings and its commands. */
export interface AgentSetup {
  /** The agent's program as the sandbox sees it (inside its read-only install). */
  bin: string;
  /** The trial's HOME and workspace (the same paths inside the sandbox and out). */
  home: string;
  workspace: string;
  /** The model as the variant names it. */
  model: string;
  /** The model gateway's origin as the sandbox reaches it (`http://127.0.0.1:PORT`). */
  gatewayUrl: string;
  /**
   * The trial's gateway token, for the agents that read their key only from a settings file
   * (cline, Continue); the others get it in their environment. Valid only while the trial runs.
   */
  gatewayToken: string;
  /** The upstream provider's protocol: agents that speak several choose their wire by it. */
  protocol: ProviderProtocol;
}

/** A tool call as the agent's output reports it; `command` when it was a shell command. */
export interface ReportedToolCall {
  tool: string;
  input: unknown;
  output: unknown;
  command: { command: string; exitCode: number | null } | null;
}

/** What one turn's output says, read by the agent's driver. */
export interface AgentTurnReport {
  /** The agent's final message to the user; null when its output carries none. */
  finalMessage: string | null;
  /** The agent's own session id, for resuming; null when not printed. */
  sessionId: string | null;
  /** The tokens the agent says it used, input uncached (the gateway meters what is counted). */
  usage: TrialUsage | null;
  toolCalls: ReportedToolCall[];
  /** An error the agent reported although its turn ended (some exit 0 after a failed model call). */
  error: string | null;
}

/**
 * A built-in driver: how to run one agent CLI non-interactively against the model gateway, and
 * how to read what it did. Installed from npm at a pinned version (agent-install.ts).
 */
export interface AgentDriver {
  readonly name: AgentName;
  /** The npm package and the program it installs in node_modules/.bin. */
  readonly packageName: string;
  readonly bin: string;
  /** The version tested with Assay: installed when the harness names none. */
  readonly pinnedVersion: string;
  /** The wire protocols it can speak; the harness's provider must serve one of them. */
  readonly wires: readonly WireProtocol[];
  /** It leaves processes running after its turn: only a sandbox with its own process namespace ends them. */
  readonly leavesDaemons: boolean;
  /** It can resume its session without a terminal; one that cannot ends a conversation after turn 1. */
  readonly resumes: boolean;
  /** Files to write into the trial's HOME before the first turn, by path under HOME. */
  homeFiles(setup: AgentSetup): Record<string, string>;
  /** Its environment; the gateway's values as `{{gateway.url}}` and `{{gateway.token}}`. */
  env(setup: AgentSetup): Record<string, string>;
  /** The shell command of a turn; `args` are the operator's extra flags, shell-quoted already. */
  command(setup: AgentSetup, turn: AgentTurnInput, args: string): string;
  read(output: string): AgentTurnReport;
}

export interface AgentTurnInput {
  number: number;
  message: string;
  /** The session the first turn reported; null when it reported none (the driver resumes its latest). */
  sessionId: string | null;
}

/** Every line of the output that is a JSON object, parsed. */
export function jsonLines(output: string): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  for (const line of output.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(trimmed);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) found.push(value as Record<string, unknown>);
    } catch {
      continue;
    }
  }
  return found;
}

/** The value at a dotted path, or undefined. */
export function at(value: unknown, dotted: string): unknown {
  let current = value;
  for (const key of dotted.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The objects of a list (its other members skipped); empty when it is not a list. */
export function objects(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? value.filter((entry): entry is Record<string, unknown> => typeof entry === 'object' && entry !== null) : [];
}

/** An id as a string (ids are strings or numbers); `fallback` for anything else. */
export function idOf(value: unknown, fallback: string | number): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : String(fallback);
}

export function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

export interface TokenCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Adds one call's counts, read at these paths of `value`, to the totals (which start when the first call is read). */
export function addCounts(totals: TokenCounts | null, value: unknown, paths: Record<keyof TokenCounts, string>): TokenCounts {
  const sum = totals ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  return {
    input: sum.input + count(at(value, paths.input)),
    output: sum.output + count(at(value, paths.output)),
    cacheRead: sum.cacheRead + count(at(value, paths.cacheRead)),
    cacheWrite: sum.cacheWrite + count(at(value, paths.cacheWrite)),
  };
}

/** A usage from its four counts (input uncached), or null when every count is zero and none was found. */
export function usageOf(counts: TokenCounts | null): TrialUsage | null {
  if (counts === null) return null;
  const { input, output, cacheRead, cacheWrite } = counts;
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    costUsd: null,
  };
}

/** One POSIX shell word with exactly this text. */
export function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export const EMPTY_REPORT: AgentTurnReport = { finalMessage: null, sessionId: null, usage: null, toolCalls: [], error: null };

/** The environment that keeps a Node CLI from phoning home or updating itself. */
export const QUIET_NODE_ENV: Record<string, string> = {
  NO_UPDATE_NOTIFIER: '1',
  npm_config_update_notifier: 'false',
  DO_NOT_TRACK: '1',
};
