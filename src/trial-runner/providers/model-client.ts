import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, LanguageModel, LanguageModelUsage, Output } from 'ai';
import type { z } from 'zod';
import { reportProviderCall } from '../execution-observers';
import { MAX_PROVIDER_TIMEOUT_MS } from './provider-config';
import type { ModelPrice, ProviderDefinition, ProviderProtocol } from './provider-config';
import { ProviderCallError, providerFailure } from './provider-failure';

export { ProviderCallError } from './provider-failure';
export type { ProviderFailureKind } from './provider-failure';

/**
 * The one way the service talks to a model provider (simulated users, LLM judges): the Vercel AI
 * SDK over the provider's own protocol, never hand-written HTTP.
 *
 * Bound: a call, the SDK's retries (at most 2, for 429, 5xx and unreachable hosts) and the waits
 * between them included, ends within the provider's timeout: `timeoutMs`, else the server variable
 * ASSAY_PROVIDER_TIMEOUT_MS, else 60 s. At the deadline the request is aborted and the call fails
 * with `provider "x" did not answer within N ms`.
 */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 60_000;
export const PROVIDER_TIMEOUT_VARIABLE = 'ASSAY_PROVIDER_TIMEOUT_MS';
const MAX_RETRIES = 2;

// The SDK prints its warnings (an unknown model's output limit, an unsupported setting) with
// console.warn: off, since the server's log is JSON lines and nothing else may write to it.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface ModelCall {
  provider: ProviderDefinition;
  /** Null only for an openai-compatible provider that needs none. */
  apiKey: string | null;
  model: string;
  system: string;
  messages: ModelMessage[];
  signal?: AbortSignal;
  maxOutputTokens?: number;
}

export interface ModelUsage {
  /** Every input token, cached ones included (the SDK's count). */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  totalTokens: number;
}

export interface ModelAnswer {
  text: string;
  usage: ModelUsage;
  durationMs: number;
}

export type ObjectCall<T> = ModelCall & { schema: z.ZodType<T>; schemaName: string; schemaDescription?: string };

export async function callModel(call: ModelCall): Promise<ModelAnswer> {
  return withinDeadline(call, async (model, abortSignal) => {
    const result = await generateText({ ...request(call, model, abortSignal) });
    return { text: result.text, usage: modelUsage(result.totalUsage) };
  });
}

/**
 * An answer in the shape of `schema`: the SDK sends the JSON schema (OpenAI's response_format,
 * Anthropic's JSON output or a forced tool) and checks the answer against it; an answer that does
 * not fit fails the call rather than reaching the caller half-parsed.
 */
export async function callModelForObject<T>(call: ObjectCall<T>): Promise<{ object: T; usage: ModelUsage; durationMs: number }> {
  return withinDeadline(call, async (model, abortSignal) => {
    const output = Output.object({ schema: call.schema, name: call.schemaName, description: call.schemaDescription });
    const result = await generateText({ ...request(call, model, abortSignal), output });
    return { object: result.output, usage: modelUsage(result.totalUsage) };
  });
}

function request(call: ModelCall, model: LanguageModel, abortSignal: AbortSignal) {
  return {
    model,
    system: call.system,
    messages: call.messages.map(({ role, content }) => ({ role, content })),
    maxRetries: MAX_RETRIES,
    abortSignal,
    ...(call.maxOutputTokens === undefined ? {} : { maxOutputTokens: call.maxOutputTokens }),
  };
}

/** Runs the call against a deadline that also ends the SDK's retries; every failure becomes a ProviderCallError. */
async function withinDeadline<R>(
  call: ModelCall & { schemaName?: string },
  work: (model: LanguageModel, signal: AbortSignal) => Promise<R>,
): Promise<R & { durationMs: number }> {
  const { provider } = call;
  const timeoutMs = providerTimeoutMs(provider);
  const model = languageModel(provider, call.apiKey, call.model);
  const deadline = new AbortController();
  const signal = call.signal ? AbortSignal.any([call.signal, deadline.signal]) : deadline.signal;
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  // The race holds the bound even if some step of the SDK did not heed the abort.
  const expiry = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      deadline.abort();
      reject(new ProviderCallError(provider.name, 'timeout', `provider "${provider.name}" did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  const report = (outcome: string, usage: ModelUsage | null) =>
    reportProviderCall({
      provider: provider.name,
      model: call.model,
      outcome,
      durationMs: performance.now() - started,
      inputTokens: usage?.inputTokens ?? 0,
      outputTokens: usage?.outputTokens ?? 0,
    });
  try {
    const result = await Promise.race([work(model, signal), expiry]);
    report('ok', (result as { usage?: ModelUsage }).usage ?? null);
    return { ...result, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    const failure = deadline.signal.aborted
      ? new ProviderCallError(provider.name, 'timeout', `provider "${provider.name}" did not answer within ${timeoutMs} ms`)
      : call.signal?.aborted
        ? new ProviderCallError(provider.name, 'cancelled', `provider "${provider.name}": the call was cancelled`)
        : providerFailure(error, call);
    report(failure.kind, null);
    throw failure;
  } finally {
    clearTimeout(timer);
  }
}

/** The provider's own timeout, else the server variable, else the default. */
export function providerTimeoutMs(provider: ProviderDefinition, env: NodeJS.ProcessEnv = process.env): number {
  if (provider.timeoutMs !== null) return provider.timeoutMs;
  const text = env[PROVIDER_TIMEOUT_VARIABLE]?.trim();
  if (!text) return DEFAULT_PROVIDER_TIMEOUT_MS;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > MAX_PROVIDER_TIMEOUT_MS) {
    throw new ProviderCallError(
      provider.name,
      'config',
      `${PROVIDER_TIMEOUT_VARIABLE} must be a whole number of milliseconds from 1 to ${MAX_PROVIDER_TIMEOUT_MS} (got "${text}")`,
    );
  }
  return value;
}

/**
 * The SDK's model for the provider's protocol. A missing key is refused here: the SDK would
 * otherwise read OPENAI_API_KEY or ANTHROPIC_API_KEY from the server's environment on its own,
 * which resolveProviderKey, not the SDK, decides.
 */
function languageModel(provider: ProviderDefinition, apiKey: string | null, model: string): LanguageModel {
  const baseURL = provider.baseURL ?? undefined;
  if (provider.protocol === 'openai-compatible') {
    if (baseURL === undefined) throw new ProviderCallError(provider.name, 'config', `provider "${provider.name}" (openai-compatible) has no baseURL`);
    return createOpenAICompatible({ name: provider.name, baseURL, apiKey: apiKey ?? undefined, supportsStructuredOutputs: true }).chatModel(model);
  }
  if (!apiKey) throw new ProviderCallError(provider.name, 'no-key', `provider "${provider.name}" (${provider.protocol}) was called without an API key`);
  if (provider.protocol === 'anthropic') return createAnthropic({ apiKey, baseURL }).messages(model);
  // Chat completions rather than the Responses API: what every OpenAI-compatible gateway speaks too.
  return createOpenAI({ apiKey, baseURL }).chat(model);
}

/** The SDK's usage of every step; a number the provider did not report counts 0. */
function modelUsage(usage: LanguageModelUsage): ModelUsage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    cacheReadTokens: usage.inputTokenDetails.cacheReadTokens ?? 0,
    cacheWriteTokens: usage.inputTokenDetails.cacheWriteTokens ?? 0,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
  };
}

/** The connector integration whose `apiKey` serves a provider of this protocol. */
export function providerIntegration(protocol: ProviderProtocol): 'openai' | 'anthropic' | 'openai-compatible' | 'gemini' {
  if (protocol === 'openai-responses') return 'openai';
  return protocol;
}

/**
 * The key for a call: the server variable the provider names (when set and not empty), else the
 * organization's connector for the provider's integration; an openai-compatible provider that
 * names no variable may need none (a local model server).
 */
export function resolveProviderKey(
  provider: ProviderDefinition,
  connectorKey: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { key: string | null } | { failure: string } {
  const fromServer = provider.apiKeyEnv === null ? undefined : env[provider.apiKeyEnv]?.trim();
  if (fromServer) return { key: fromServer };
  const fromConnector = connectorKey?.trim();
  if (fromConnector) return { key: fromConnector };
  if (provider.protocol === 'openai-compatible' && provider.apiKeyEnv === null) return { key: null };
  const integration = providerIntegration(provider.protocol);
  const connector = `add an "${integration}" connector to the organization (with several, mark one isDefault)`;
  const where =
    provider.apiKeyEnv === null
      ? `${connector}, or name a server variable in providers.${provider.name}.apiKeyEnv`
      : `set the server variable ${provider.apiKeyEnv} (providers.${provider.name}.apiKeyEnv) or ${connector}`;
  return { failure: `provider "${provider.name}" has no API key: ${where}` };
}

/**
 * What a call cost in US dollars at the configured price, cached input tokens at the input
 * price (the table has no cache prices: an upper bound); null when the model has no price.
 */
export function priceOf(prices: Record<string, ModelPrice>, model: string, usage: ModelUsage): number | null {
  const price = Object.prototype.hasOwnProperty.call(prices, model) ? prices[model] : undefined;
  if (price === undefined) return null;
  return (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}
