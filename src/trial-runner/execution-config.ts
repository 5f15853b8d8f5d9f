import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AGENT_HARNESSES, REMOTE_SANDBOXES } from '#shared/eval-definitions';
import type { AgentHarness } from '#shared/eval-definitions';
import { parseUsageRule, UsageRule } from './harness/usage';
import { AGENT_DRIVERS, AGENT_NAMES } from './harness/agents';
import type { AgentName } from './harness/agents';
import { serves } from './gateway/protocols';
import type { WireProtocol } from './gateway/protocols';
import type { RepositoryPolicy } from './repository-urls';
import { ConfigShape, ExecutionConfigError, isShape, nonEmptyString, optionalBoolean, stringMap } from './config-shape';
import { DEFAULT_TRIAL_LIMITS, TrialLimits, trialLimits } from './trial-limits';
import { checkUnsandboxedConsent, repositoryPolicy } from './operator-safety';
import { EMPTY_USERS_CONFIG, providerSettings } from './providers/provider-config';
import type { ProviderSettings } from './providers/provider-config';

export { ExecutionConfigError } from './config-shape';

/**
 * The operator's execution configuration (ASSAY_CONFIG, YAML or JSON):
 *
 * ```yaml
 * defaultSandbox: bubblewrap       # optional: bubblewrap | process; else probed on this host
 * network: false                   # whether sandboxes without their own setting reach the network
 * hiddenPaths: [/etc/assay]        # more host paths the bubblewrap sandbox must not see
 * harnesses:
 *   harness_kind_1:
 *     version: "1.2.0"             # recorded as the trial's harnessVersion
 *     install: "npm i -g agent"    # optional, run in the sandbox before the profile's install
 *     run: "agent --model {{model}} -p {{prompt}}"   # placeholders are shell-quoted
 *     continue: "agent --resume -p {{prompt}}"       # optional: turns 2+ of a conversation
 *     env: { AGENT_TELEMETRY: "0", OPENAI_BASE_URL: "{{gateway.url}}/v1", OPENAI_API_KEY: "{{gateway.token}}" }
 *     provider: openai             # optional: the provider the agent reaches through the model gateway
 *     usage:                       # optional: how to read token counts from the harness output
 *       format: json-lines         # or regex (each field a pattern with one capture group)
 *       aggregate: last            # or sum
 *       inputTokens: usage.input_tokens
 *       outputTokens: usage.output_tokens
 *       cacheReadTokens: usage.cache_read_input_tokens
 *       cacheWriteTokens: usage.cache_creation_input_tokens
 *       finalMessage: result        # optional: the agent's final answer (a path, or a pattern with a group)
 * sandboxes:
 *   sandbox_kind_1: { driver: bubblewrap, network: true }
 * limits:                          # per trial; see trial-limits.ts for how each is held
 *   processes: 1024
 *   memoryMb: 8192                 # per process
 *   tmpMb: 1024                    # the private /tmp (RAM)
 *   workspaceMb: 8192              # workspace, home and TMPDIR together
 * allowUnsandboxed: false          # must be true for any trial to run under the process driver
 * repositories: { allowSsh: false, allowLocal: false, allowPrivateHosts: false }   # source urls
 * providers: { openai: { protocol: openai, apiKeyEnv: OPENAI_API_KEY } }   # see providers/provider-config.ts
 * users: { default: openai, defaultModel: gpt-5.4-mini }   # simulated users' providers
 * judges: { provider: openai, model: gpt-5.4-mini }        # LLM judges' provider
 * prices: { gpt-5.4-mini: { inputPerMTok: 0.25, outputPerMTok: 2 } }
 * gateway: { recordBodies: false }  # true: keep each model call's request and answer with its trial
 * ```
 */
export type SandboxDriverName = 'bubblewrap' | 'process';
export const SANDBOX_DRIVERS: readonly SandboxDriverName[] = ['bubblewrap', 'process'];

export interface HarnessDefinition {
  /** The operator's label, or for a built-in agent the npm version installed (its pinned one when not given). */
  version: string;
  /** A built-in agent driver and its extra flags; null: the operator's own `run` template. */
  agent: { name: AgentName; args: string[] } | null;
  install: string | null;
  run: string;
  /** Run for turns 2+ of a conversation (e.g. with a resume flag); null: `run` again with the new message. */
  continue: string | null;
  env: Record<string, string>;
  usage: UsageRule | null;
  /** Matched against the harness output of a failed run: a match means its credentials were refused. */
  authFailure: string | null;
  /** The provider (a name in `providers`) the agent reaches through the model gateway; null: none. */
  provider: string | null;
}

export interface SandboxDefinition {
  driver: SandboxDriverName;
  /** Null: the configuration's top-level `network`. */
  network: boolean | null;
}

export interface ExecutionConfig {
  harnesses: Partial<Record<AgentHarness, HarnessDefinition>>;
  sandboxes: Partial<Record<string, SandboxDefinition>>;
  defaultSandbox: SandboxDriverName | null;
  network: boolean;
  hiddenPaths: string[];
  limits: TrialLimits;
  allowUnsandboxed: boolean;
  repositories: RepositoryPolicy;
  /** The model providers simulated users and judges call, by name. */
  providers: ProviderSettings['providers'];
  users: ProviderSettings['users'];
  judges: ProviderSettings['judges'];
  /** US dollars per million tokens, by model: what the providers' usage costs. */
  prices: ProviderSettings['prices'];
  /** The model gateway: `recordBodies` keeps each call's request and answer (redacted) with the trial. */
  gateway: { recordBodies: boolean };
}

export const EMPTY_EXECUTION_CONFIG: ExecutionConfig = {
  harnesses: {},
  sandboxes: {},
  defaultSandbox: null,
  network: false,
  hiddenPaths: [],
  limits: DEFAULT_TRIAL_LIMITS,
  allowUnsandboxed: false,
  repositories: { allowSsh: false, allowLocal: false, allowPrivateHosts: false },
  providers: {},
  users: EMPTY_USERS_CONFIG,
  judges: null,
  prices: {},
  gateway: { recordBodies: false },
};

/** Reads and validates the configuration once at start; null means no file (built-ins only). */
/**
 * What a setting left out means where the config is read. On the user's own machine (the command
 * line's local mode) its repositories are the user's: `repositories.allowLocal` defaults to true.
 */
export interface ConfigDefaults {
  allowLocal?: boolean;
}

export function loadExecutionConfig(file: string | null, defaults: ConfigDefaults = {}): ExecutionConfig {
  if (file === null) return parseExecutionConfig({}, 'execution config', defaults);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ExecutionConfigError(file, '', `cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let value: unknown;
  try {
    value = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    const first = String((error as { message: unknown }).message)
      .split('\n')[0]
      .replace(/:$/, '');
    throw new ExecutionConfigError(file, '', `is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${first}`);
  }
  return parseExecutionConfig(value ?? {}, file, defaults);
}

const TOP_KEYS = [
  'harnesses',
  'sandboxes',
  'defaultSandbox',
  'network',
  'hiddenPaths',
  'limits',
  'allowUnsandboxed',
  'repositories',
  'providers',
  'users',
  'judges',
  'prices',
  'gateway',
];

/** Validates an already parsed configuration; `source` names it in errors. */
export function parseExecutionConfig(value: unknown, source = 'execution config', defaults: ConfigDefaults = {}): ExecutionConfig {
  const shape = new ConfigShape(source);
  const top = shape.object(value, '', TOP_KEYS);
  const config: ExecutionConfig = {
    harnesses: harnesses(shape, top.harnesses),
    sandboxes: sandboxes(shape, top.sandboxes),
    defaultSandbox: top.defaultSandbox == null ? null : driverName(shape, top.defaultSandbox, 'defaultSandbox'),
    network: optionalBoolean(shape, top.network, 'network') ?? false,
    hiddenPaths: hiddenPaths(shape, top.hiddenPaths),
    limits: trialLimits(shape, top.limits),
    allowUnsandboxed: optionalBoolean(shape, top.allowUnsandboxed, 'allowUnsandboxed') ?? false,
    repositories: repositoryPolicy(shape, top.repositories, defaults.allowLocal ?? false),
    ...providerSettings(shape, top),
    gateway: gatewaySettings(shape, top.gateway),
  };
  checkUnsandboxedConsent(shape, config);
  checkHarnessProviders(shape, config);
  return config;
}

function harnesses(shape: ConfigShape, value: unknown): ExecutionConfig['harnesses'] {
  const result: ExecutionConfig['harnesses'] = {};
  if (value == null) return result;
  const entries = shape.object(value, 'harnesses', AGENT_HARNESSES, 'a harness kind (harness_kind_1 .. harness_kind_8)');
  for (const [kind, definition] of Object.entries(entries)) {
    result[kind as AgentHarness] = harness(shape, definition, `harnesses.${kind}`);
  }
  return result;
}

function harness(shape: ConfigShape, value: unknown, at: string): HarnessDefinition {
  const fields = shape.object(value, at, ['agent', 'version', 'args', 'install', 'run', 'continue', 'env', 'usage', 'authFailure', 'provider']);
  if (fields.agent != null) return agentHarness(shape, fields, at);
  if (fields.args != null) shape.fail(`${at}.args`, 'is for a built-in agent (agent: …); put the flags in run');
  const version = typeof fields.version === 'number' ? String(fields.version) : fields.version;
  return {
    agent: null,
    version: nonEmptyString(shape, version, `${at}.version`),
    install: fields.install == null ? null : template(shape, fields.install, `${at}.install`),
    run: template(shape, fields.run, `${at}.run`),
    continue: fields.continue == null ? null : template(shape, fields.continue, `${at}.continue`),
    env: stringMap(shape, fields.env, `${at}.env`),
    usage: fields.usage == null ? null : parseUsageRule(shape, fields.usage, `${at}.usage`),
    authFailure: fields.authFailure == null ? null : pattern(shape, fields.authFailure, `${at}.authFailure`),
    provider: fields.provider == null ? null : nonEmptyString(shape, fields.provider, `${at}.provider`),
  };
}

/**
 * A built-in agent: `agent`, `provider`, and optionally an exact `version`, `env` and `args`.
 * The driver knows its commands, its usage and its settings; a template of the operator's does
 * not mix with it.
 */
function agentHarness(shape: ConfigShape, fields: Record<string, unknown>, at: string): HarnessDefinition {
  if (!AGENT_NAMES.includes(fields.agent as AgentName))
    shape.fail(`${at}.agent`, `must be one of ${AGENT_NAMES.join(', ')} (got ${JSON.stringify(fields.agent)})`);
  const name = fields.agent as AgentName;
  for (const key of ['install', 'run', 'continue', 'usage', 'authFailure']) {
    if (fields[key] != null)
      shape.fail(`${at}.${key}`, `is not used with agent: ${name} (the driver runs the agent itself); remove it, or drop agent to use your own template`);
  }
  if (fields.provider == null)
    shape.fail(`${at}.provider`, `is required with agent: ${name}: the provider (in providers) the agent reaches through the model gateway`);
  const version =
    fields.version == null ? AGENT_DRIVERS[name].pinnedVersion : typeof fields.version === 'string' ? fields.version : JSON.stringify(fields.version);
  // Unpinned installs quietly take older releases on older Node versions: an exact version only.
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version))
    shape.fail(`${at}.version`, `must be an exact version such as ${AGENT_DRIVERS[name].pinnedVersion} (got ${JSON.stringify(fields.version)})`);
  return {
    version,
    agent: { name, args: agentArgs(shape, fields.args, `${at}.args`) },
    install: null,
    run: '',
    continue: null,
    env: stringMap(shape, fields.env, `${at}.env`),
    usage: null,
    authFailure: null,
    provider: nonEmptyString(shape, fields.provider, `${at}.provider`),
  };
}

function agentArgs(shape: ConfigShape, value: unknown, at: string): string[] {
  if (value == null) return [];
  if (!Array.isArray(value) || value.length > 50) shape.fail(at, 'must be a list of at most 50 flags');
  return value.map((entry, index) => {
    if (!isShape.string(entry) || entry === '' || entry.length > 1000 || entry.includes('\0'))
      shape.fail(`${at}[${index}]`, 'must be a non-empty string of at most 1000 characters');
    return entry;
  });
}

/**
 * A harness's provider must be configured, and only a harness with one may use the gateway's
 * values in its environment ({{gateway.url}}, {{gateway.token}}).
 */
function checkHarnessProviders(shape: ConfigShape, config: ExecutionConfig): void {
  for (const [kind, definition] of Object.entries(config.harnesses)) {
    if (definition.provider !== null && !Object.hasOwn(config.providers, definition.provider)) {
      const configured = Object.keys(config.providers);
      shape.fail(
        `harnesses.${kind}.provider`,
        `names the provider "${definition.provider}", which is not in providers (${configured.length === 0 ? 'none configured' : `configured: ${configured.join(', ')}`})`,
      );
    }
    if (definition.agent !== null && definition.provider !== null) {
      const driver = AGENT_DRIVERS[definition.agent.name];
      const provider = config.providers[definition.provider];
      if (!driver.wires.some((wire) => serves(provider, wire))) {
        shape.fail(
          `harnesses.${kind}.provider`,
          `names "${definition.provider}" (protocol ${provider.protocol}), but ${driver.name} speaks ${driver.wires.join(' or ')}: use a provider with ${agentProtocols(driver.wires)}`,
        );
      }
    }
    for (const [name, text] of Object.entries(definition.env)) {
      for (const match of text.matchAll(/\{\{\s*([^}]*?)\s*\}\}/g)) {
        if (!GATEWAY_VALUES.includes(match[1]))
          shape.fail(`harnesses.${kind}.env.${name}`, `unknown placeholder {{${match[1]}}}; use {{gateway.url}} or {{gateway.token}}`);
        if (definition.provider === null) shape.fail(`harnesses.${kind}.env.${name}`, `uses {{${match[1]}}} but harnesses.${kind} names no provider`);
      }
    }
  }
}

/** The provider protocols that serve these wires, for an error message. */
function agentProtocols(wires: readonly WireProtocol[]): string {
  const names: Record<WireProtocol, string> = {
    anthropic: 'protocol anthropic',
    'openai-chat': 'protocol openai, openai-compatible or openai-responses',
    'openai-responses': 'protocol openai, openai-compatible or openai-responses',
    gemini: 'protocol gemini',
  };
  return [...new Set(wires.map((wire) => names[wire]))].join(', or ');
}

function gatewaySettings(shape: ConfigShape, value: unknown): ExecutionConfig['gateway'] {
  if (value == null) return { recordBodies: false };
  const fields = shape.object(value, 'gateway', ['recordBodies']);
  return { recordBodies: optionalBoolean(shape, fields.recordBodies, 'gateway.recordBodies') ?? false };
}

/** The values a harness's environment may take from its trial's model gateway. */
export const GATEWAY_VALUES = ['gateway.url', 'gateway.token'];

/** A regular expression, checked when the configuration is read rather than at the first trial. */
function pattern(shape: ConfigShape, value: unknown, at: string): string {
  const text = nonEmptyString(shape, value, at);
  try {
    new RegExp(text);
  } catch {
    shape.fail(at, 'is not a valid regular expression');
  }
  return text;
}

/** A shell command template: only {{prompt}} and {{model}}, which are shell-quoted when rendered. */
function template(shape: ConfigShape, value: unknown, at: string): string {
  const text = nonEmptyString(shape, value, at);
  for (const match of text.matchAll(/\{\{\s*([^}]*?)\s*\}\}/g)) {
    if (match[1] !== 'prompt' && match[1] !== 'model') {
      shape.fail(at, `unknown placeholder {{${match[1]}}}; use {{prompt}} or {{model}}`);
    }
  }
  return text;
}

function sandboxes(shape: ConfigShape, value: unknown): ExecutionConfig['sandboxes'] {
  const result: ExecutionConfig['sandboxes'] = {};
  if (value == null) return result;
  const entries = shape.object(value, 'sandboxes', REMOTE_SANDBOXES, 'a sandbox kind (sandbox_kind_1 .. sandbox_kind_6)');
  for (const [kind, definition] of Object.entries(entries)) {
    const fields = shape.object(definition, `sandboxes.${kind}`, ['driver', 'network']);
    result[kind] = {
      driver: driverName(shape, fields.driver, `sandboxes.${kind}.driver`),
      network: optionalBoolean(shape, fields.network, `sandboxes.${kind}.network`),
    };
  }
  return result;
}

function driverName(shape: ConfigShape, value: unknown, at: string): SandboxDriverName {
  if (!SANDBOX_DRIVERS.includes(value as SandboxDriverName)) {
    shape.fail(at, `must be one of ${SANDBOX_DRIVERS.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as SandboxDriverName;
}

function hiddenPaths(shape: ConfigShape, value: unknown): string[] {
  if (value == null) return [];
  if (!Array.isArray(value)) shape.fail('hiddenPaths', 'must be a list of absolute paths');
  return value.map((entry, index) => {
    if (!isShape.string(entry) || !path.isAbsolute(entry)) shape.fail(`hiddenPaths[${index}]`, 'must be an absolute path');
    return path.resolve(entry);
  });
}
