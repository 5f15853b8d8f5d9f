import type { ExecutionConfig } from '../execution-config';
import type { TrialSpec } from '../contract';
import type { UsageRule } from './usage';
import { AGENT_HARNESSES } from '#shared/eval-definitions';
import type { AgentHarness } from '#shared/eval-definitions';

/** What the trial runs for the agent's turns. */
export interface HarnessPlan {
  version: string;
  /** The driver's own set-up, run in the sandbox before the profile's install. */
  install: string | null;
  /** The command of a turn (1-based) whose message is `message`, its template rendered. */
  commandFor(turn: number, message: string): string;
  env: Record<string, string>;
  usage: UsageRule | null;
  authFailure: RegExp | null;
  /** The provider (a name in ASSAY_CONFIG providers) the agent reaches through the model gateway; null: none. */
  provider: string | null;
}

export const COMMAND_HARNESS_VERSION = 'command/1';

/**
 * The plan for the spec's harness, or the failure that voids the trial. `command` runs the
 * profile's own run command; each `harness_kind_N` is whatever the operator configured.
 */
export function resolveHarness(spec: TrialSpec, config: ExecutionConfig): HarnessPlan | { failure: string } {
  if (spec.harness === 'command') {
    const run = spec.profile?.run;
    if (run === undefined || run.trim() === '') return { failure: 'the command harness needs a profile with a run command' };
    // Every turn runs the profile's command again; the turn's message is in ASSAY_PROMPT and on stdin.
    const provider = spec.profile?.provider ?? null;
    return { version: COMMAND_HARNESS_VERSION, install: null, commandFor: () => run, env: {}, usage: null, authFailure: null, provider };
  }
  const definition = AGENT_HARNESSES.includes(spec.harness as AgentHarness) ? config.harnesses[spec.harness as AgentHarness] : undefined;
  if (definition === undefined) return { failure: `${spec.harness} has no driver configured on this server` };
  const values = { prompt: spec.prompt, model: spec.model };
  const { run } = definition;
  // Turns 2+ use the driver's `continue` (a resume flag) when it has one, else `run` with the new message.
  const continued = definition.continue ?? run;
  return {
    version: definition.version,
    install: definition.install === null ? null : renderTemplate(definition.install, values),
    commandFor: (turn, message) => renderTemplate(turn === 1 ? run : continued, { prompt: message, model: spec.model }),
    env: definition.env,
    usage: definition.usage,
    authFailure: definition.authFailure === null ? null : new RegExp(definition.authFailure, 'm'),
    provider: definition.provider,
  };
}

/**
 * Fills {{prompt}} and {{model}}, each shell-quoted: the prompt is untrusted text, and quoting
 * keeps it one argument whatever it holds (quotes, `$(...)`, newlines).
 */
export function renderTemplate(template: string, values: { prompt: string; model: string }): string {
  return template.replace(/\{\{\s*(prompt|model)\s*\}\}/g, (_match, name: 'prompt' | 'model') => shellQuote(values[name]));
}

/** One POSIX shell word with exactly this text. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
