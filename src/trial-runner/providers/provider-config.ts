import { isReservedVariable, reservedVariableMessage } from '#shared/reserved-variables';
import { AGENT_HARNESSES } from '#shared/eval-definitions';
import type { AgentHarness } from '#shared/eval-definitions';
import { ConfigShape, isShape, nonEmptyString } from '../config-shape';

/**
 * The model providers of the operator's execution configuration (ASSAY_CONFIG), which simulated
 * users and LLM judges call, and the price table their usage is costed with:
 *
 * ```yaml
 * providers:
 *   openai: { protocol: openai, apiKeyEnv: OPENAI_API_KEY, models: [gpt-5.4-mini] }
 *   claude: { protocol: anthropic, timeoutMs: 30000 }     # key: the organization's anthropic connector
 *   local:  { protocol: openai-compatible, baseURL: "http://127.0.0.1:11434/v1" }
 * users:
 *   default: openai              # the provider of a simulated user that names no harness
 *   defaultModel: gpt-5.4-mini   # the model of one that names no model
 *   harness_kind_2: claude       # a simulated user naming harness_kind_2 calls this provider
 * judges: { provider: claude, model: claude-sonnet-4-5 }
 * prices:
 *   gpt-5.4-mini: { inputPerMTok: 0.25, outputPerMTok: 2 }
 * ```
 */
export type ProviderProtocol = 'openai' | 'anthropic' | 'openai-compatible' | 'openai-responses' | 'gemini';
export const PROVIDER_PROTOCOLS: readonly ProviderProtocol[] = ['openai', 'anthropic', 'openai-compatible', 'openai-responses', 'gemini'];
/** The protocols the service's own model client speaks (simulated users, judges); the others are for agents, through the gateway. */
export const CLIENT_PROTOCOLS: readonly ProviderProtocol[] = ['openai', 'anthropic', 'openai-compatible'];

export interface ProviderDefinition {
  /** The key in `providers`. */
  name: string;
  protocol: ProviderProtocol;
  /** An http(s) URL; null: the protocol's default (openai-compatible requires one). */
  baseURL: string | null;
  /** A server environment variable holding the key; null: the organization's connector. */
  apiKeyEnv: string | null;
  /** What evals.models.list shows for the provider. */
  models: string[];
  /** Per call, retries included; null: ASSAY_PROVIDER_TIMEOUT_MS when set, else DEFAULT_PROVIDER_TIMEOUT_MS. */
  timeoutMs: number | null;
}

export interface UsersConfig {
  /** users.harness_kind_N: the provider of a simulated user that names that harness. */
  byHarness: Partial<Record<AgentHarness, string>>;
  /** users.default: the provider of a simulated user that names no harness. */
  defaultProvider: string | null;
  /** users.defaultModel: the model of a simulated user that names none. */
  defaultModel: string;
}

export interface JudgesConfig {
  provider: string;
  model: string;
}

export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

export interface ProviderSettings {
  providers: Record<string, ProviderDefinition>;
  users: UsersConfig;
  judges: JudgesConfig | null;
  prices: Record<string, ModelPrice>;
}

export const DEFAULT_USER_MODEL = 'gpt-5.4-mini';
export const EMPTY_USERS_CONFIG: UsersConfig = { byHarness: {}, defaultProvider: null, defaultModel: DEFAULT_USER_MODEL };

/** The longest per-call timeout a provider may set: one hour. */
export const MAX_PROVIDER_TIMEOUT_MS = 3_600_000;
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PROVIDER_KEYS = ['protocol', 'baseURL', 'apiKeyEnv', 'models', 'timeoutMs'];

/** Parses the four top-level keys; names used in `users` and `judges` must be configured providers. */
export function providerSettings(shape: ConfigShape, top: Record<string, unknown>): ProviderSettings {
  const providers = providerDefinitions(shape, top.providers);
  return {
    providers,
    users: usersConfig(shape, top.users, providers),
    judges: judgesConfig(shape, top.judges, providers),
    prices: priceTable(shape, top.prices),
  };
}

function providerDefinitions(shape: ConfigShape, value: unknown): Record<string, ProviderDefinition> {
  const result: Record<string, ProviderDefinition> = {};
  if (value == null) return result;
  if (!isShape.record(value)) shape.fail('providers', 'must be a mapping of provider names to definitions');
  for (const [name, definition] of Object.entries(value)) {
    if (!PROVIDER_NAME.test(name)) {
      shape.fail(`providers.${name}`, 'is not a valid provider name: use letters, digits, ".", "_" and "-" (at most 63, starting with a letter or digit)');
    }
    result[name] = providerDefinition(shape, name, definition);
  }
  return result;
}

function providerDefinition(shape: ConfigShape, name: string, value: unknown): ProviderDefinition {
  const at = `providers.${name}`;
  const fields = shape.object(value, at, PROVIDER_KEYS);
  const protocol = fields.protocol;
  if (protocol == null) shape.fail(`${at}.protocol`, `is required (one of ${PROVIDER_PROTOCOLS.join(', ')})`);
  if (!PROVIDER_PROTOCOLS.includes(protocol as ProviderProtocol)) {
    shape.fail(`${at}.protocol`, `must be one of ${PROVIDER_PROTOCOLS.join(', ')} (got ${JSON.stringify(protocol)})`);
  }
  const baseURL = fields.baseURL == null ? null : httpURL(shape, fields.baseURL, `${at}.baseURL`);
  if (baseURL === null && protocol === 'openai-compatible') {
    shape.fail(`${at}.baseURL`, 'is required for the openai-compatible protocol (the endpoint, e.g. http://127.0.0.1:11434/v1)');
  }
  return {
    name,
    protocol: protocol as ProviderProtocol,
    baseURL,
    apiKeyEnv: fields.apiKeyEnv == null ? null : variableName(shape, fields.apiKeyEnv, `${at}.apiKeyEnv`),
    models: modelList(shape, fields.models, `${at}.models`),
    timeoutMs: fields.timeoutMs == null ? null : timeout(shape, fields.timeoutMs, `${at}.timeoutMs`),
  };
}

/** Credentials in the URL are refused: they would travel into logs and errors, where a key never goes. */
function httpURL(shape: ConfigShape, value: unknown, at: string): string {
  const text = nonEmptyString(shape, value, at);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return shape.fail(at, 'must be an http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') shape.fail(at, 'must be an http(s) URL');
  if (url.username !== '' || url.password !== '') shape.fail(at, 'must not hold credentials: name the key with apiKeyEnv or an organization connector');
  return text.replace(/\/+$/, '');
}

function variableName(shape: ConfigShape, value: unknown, at: string): string {
  const text = nonEmptyString(shape, value, at);
  if (!ENV_NAME.test(text)) shape.fail(at, `"${text}" is not a valid environment variable name`);
  if (isReservedVariable(text)) shape.fail(at, reservedVariableMessage(text));
  return text;
}

function modelList(shape: ConfigShape, value: unknown, at: string): string[] {
  if (value == null) return [];
  if (!Array.isArray(value)) shape.fail(at, 'must be a list of model names');
  const models = value.map((entry, index) => nonEmptyString(shape, entry, `${at}[${index}]`).trim());
  return [...new Set(models)];
}

function timeout(shape: ConfigShape, value: unknown, at: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PROVIDER_TIMEOUT_MS) {
    shape.fail(at, `must be a whole number of milliseconds from 1 to ${MAX_PROVIDER_TIMEOUT_MS}`);
  }
  return value;
}

function usersConfig(shape: ConfigShape, value: unknown, providers: Record<string, ProviderDefinition>): UsersConfig {
  if (value == null) return EMPTY_USERS_CONFIG;
  const fields = shape.object(value, 'users', [...AGENT_HARNESSES, 'default', 'defaultModel']);
  const byHarness: UsersConfig['byHarness'] = {};
  for (const harness of AGENT_HARNESSES) {
    if (fields[harness] != null) byHarness[harness] = providerName(shape, fields[harness], `users.${harness}`, providers);
  }
  return {
    byHarness,
    defaultProvider: fields.default == null ? null : providerName(shape, fields.default, 'users.default', providers),
    defaultModel: fields.defaultModel == null ? DEFAULT_USER_MODEL : nonEmptyString(shape, fields.defaultModel, 'users.defaultModel').trim(),
  };
}

function judgesConfig(shape: ConfigShape, value: unknown, providers: Record<string, ProviderDefinition>): JudgesConfig | null {
  if (value == null) return null;
  const fields = shape.object(value, 'judges', ['provider', 'model']);
  return {
    provider: providerName(shape, fields.provider, 'judges.provider', providers),
    model: nonEmptyString(shape, fields.model, 'judges.model').trim(),
  };
}

function providerName(shape: ConfigShape, value: unknown, at: string, providers: Record<string, ProviderDefinition>): string {
  const name = nonEmptyString(shape, value, at);
  if (!Object.prototype.hasOwnProperty.call(providers, name)) {
    const configured = Object.keys(providers);
    shape.fail(
      at,
      `names the provider "${name}", which is not in providers (${configured.length === 0 ? 'none configured' : `configured: ${configured.join(', ')}`})`,
    );
  }
  // Simulated users and judges call through the service's own model client.
  if (!CLIENT_PROTOCOLS.includes(providers[name].protocol)) {
    shape.fail(
      at,
      `names the provider "${name}", whose protocol ${providers[name].protocol} only agents use (through the model gateway); use one of ${CLIENT_PROTOCOLS.join(', ')}`,
    );
  }
  return name;
}

function priceTable(shape: ConfigShape, value: unknown): Record<string, ModelPrice> {
  const result: Record<string, ModelPrice> = {};
  if (value == null) return result;
  if (!isShape.record(value)) shape.fail('prices', 'must be a mapping of model names to {inputPerMTok, outputPerMTok}');
  for (const [model, entry] of Object.entries(value)) {
    const fields = shape.object(entry, `prices.${model}`, ['inputPerMTok', 'outputPerMTok']);
    result[model] = {
      inputPerMTok: pricePerMillion(shape, fields.inputPerMTok, `prices.${model}.inputPerMTok`),
      outputPerMTok: pricePerMillion(shape, fields.outputPerMTok, `prices.${model}.outputPerMTok`),
    };
  }
  return result;
}

function pricePerMillion(shape: ConfigShape, value: unknown, at: string): number {
  if (value == null) shape.fail(at, 'is required (US dollars per million tokens)');
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) shape.fail(at, 'must be a non-negative number (US dollars per million tokens)');
  return value;
}
