import type { ExecutionConfig, HarnessDefinition } from '../execution-config';
import type { TrialSpec } from '../contract';
import type { UsageRule } from './usage';
import { AGENT_HARNESSES } from '#shared/eval-definitions';
import { AGENT_DRIVERS } from './agents';
import type { AgentDriver, AgentSetup } from './agents';
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
  /** A built-in agent driver's run; null for a template of the operator's and for `command`. */
  agent: AgentRun | null;
}

/**
 * A trial's run of a built-in agent: what the runner fills in as the trial goes (the install,
 * the settings the commands need, the session the first turn reported).
 */
export interface AgentRun {
  driver: AgentDriver;
  version: string;
  /** The operator's extra flags, each shell-quoted, with a leading space (or empty). */
  args: string;
  /** Set once the agent is installed and the trial's directory exists. */
  setup: AgentSetup | null;
  sessionId: string | null;
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
    return { version: COMMAND_HARNESS_VERSION, install: null, commandFor: () => run, env: {}, usage: null, authFailure: null, provider, agent: null };
  }
  const definition = AGENT_HARNESSES.includes(spec.harness as AgentHarness) ? config.harnesses[spec.harness as AgentHarness] : undefined;
  if (definition === undefined) return { failure: `${spec.harness} has no driver configured on this server` };
  if (definition.agent !== null) return agentPlan(definition, definition.agent);
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
    agent: null,
  };
}

/** A built-in agent's plan: its driver writes each turn's command once the runner has set it up. */
function agentPlan(definition: HarnessDefinition, agent: NonNullable<HarnessDefinition['agent']>): HarnessPlan {
  const driver = AGENT_DRIVERS[agent.name];
  const run: AgentRun = { driver, version: definition.version, args: agent.args.map((arg) => ` ${shellQuote(arg)}`).join(''), setup: null, sessionId: null };
  return {
    version: definition.version,
    install: null,
    commandFor: (turn, message) => {
      if (run.setup === null) throw new Error(`${driver.name} was not set up before its turn`);
      return driver.command(run.setup, { number: turn, message, sessionId: run.sessionId }, run.args);
    },
    // Set up per trial (the driver's own needs the model and the gateway); the operator's overrides go over it.
    env: definition.env,
    usage: null,
    authFailure: null,
    provider: definition.provider,
    agent: run,
  };
}

/**
 * Fills {{prompt}} and {{model}}, each shell-quoted: the prompt is untrusted text, and quoting
 * keeps it one argument whatever it holds (quotes, `$(...)`, newlines).
 */
export function renderTemplate(template: string, values: { prompt: string; model: string }): string {
  return template.replace(/\{\{\s*(prompt|model)\s*\}\}/g, (_match, name: 'prompt' | 'model') => shellQuote(values[name]));
}

/** A harness kind's built-in agent, as evals.models.list shows it. */
export interface HarnessAgentEntry {
  harness: string;
  agent: string;
  /** The version its trials install: the harness's own, else the driver's pinned one. */
  version: string;
  pinnedVersion: string;
  packageName: string;
  provider: string | null;
}

/** The harness kinds configured with a built-in agent, in configuration order. */
export function harnessAgents(config: ExecutionConfig): HarnessAgentEntry[] {
  return Object.entries(config.harnesses).flatMap(([harness, definition]) => {
    if (definition.agent === null) return [];
    const driver = AGENT_DRIVERS[definition.agent.name];
    const { version, provider } = definition;
    return [{ harness, agent: driver.name, version, pinnedVersion: driver.pinnedVersion, packageName: driver.packageName, provider }];
  });
}

/** One POSIX shell word with exactly this text. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
