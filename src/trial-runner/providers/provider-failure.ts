import { APICallError, NoObjectGeneratedError, RetryError } from 'ai';
import type { ProviderDefinition } from './provider-config';

/** What broke in a call: lets a caller tell a provider that is down from one it cannot reach. */
export type ProviderFailureKind = 'no-key' | 'timeout' | 'cancelled' | 'http' | 'unreachable' | 'schema' | 'config' | 'other';

/**
 * A model call that failed. The message is one line that names the provider and what broke, for a
 * trial's `failure` or a judge's error; it never holds the key (every message built here has it
 * cut out, whatever the provider echoed back). The SDK's error is not kept as `cause`: it holds
 * the request body (the conversation), which a log line must not carry either.
 */
export class ProviderCallError extends Error {
  constructor(
    readonly provider: string,
    readonly kind: ProviderFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderCallError';
  }
}

const MAX_DETAIL = 300;
export const REDACTED = '[redacted]';

/** One line, at most 300 characters, with every occurrence of the key replaced. */
export function oneLine(text: string, apiKey: string | null): string {
  let line = text.replace(/\s+/g, ' ').trim();
  if (apiKey) line = line.split(apiKey).join(REDACTED);
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL - 1)}…` : line;
}

export interface FailedCall {
  provider: ProviderDefinition;
  apiKey: string | null;
  model: string;
  schemaName?: string;
}

/** Turns whatever the SDK threw into a ProviderCallError whose message says what to look at. */
export function providerFailure(error: unknown, call: FailedCall): ProviderCallError {
  if (error instanceof ProviderCallError) return error;
  const { provider, apiKey } = call;
  const who = `provider "${provider.name}" (${provider.protocol})`;
  const fail = (kind: ProviderFailureKind, message: string) => new ProviderCallError(provider.name, kind, oneLine(message, apiKey));
  const cause = RetryError.isInstance(error) ? (error.lastError ?? error) : error;
  if (NoObjectGeneratedError.isInstance(cause)) {
    const detail = cause.cause instanceof Error ? cause.cause.message : cause.message;
    return fail('schema', `${who} answered model "${call.model}" with no object that fits the schema "${call.schemaName ?? 'object'}": ${detail}`);
  }
  if (APICallError.isInstance(cause)) {
    if (cause.statusCode === undefined) return fail('unreachable', `${who} could not be reached at ${cause.url}: ${networkDetail(cause)}`);
    return fail('http', `${who} answered HTTP ${cause.statusCode}: ${cause.message}`);
  }
  const network = fetchFailure(cause);
  if (network !== null) return fail('unreachable', `${who} could not be reached at ${endpoint(provider)}: ${network}`);
  const message = typeof cause === 'object' && cause !== null && 'message' in cause ? String(cause.message) : String(cause);
  return fail('other', `${who} failed: ${message}`);
}

/** The SDK's "Cannot connect to API: fetch failed" says less than the socket error under it. */
function networkDetail(error: Error): string {
  return fetchFailure(error.cause) ?? error.message;
}

/**
 * fetch's "fetch failed" TypeError, by its socket error. Matched by name and message, not
 * instanceof: a TypeError from another realm (a test sandbox) is no instance of this one's, and
 * the SDK itself then passes it through unwrapped.
 */
function fetchFailure(error: unknown): string | null {
  if (typeof error !== 'object' || error === null || (error as Error).name !== 'TypeError' || (error as Error).message !== 'fetch failed') return null;
  const socket = (error as Error).cause as (Error & { code?: string }) | undefined;
  if (socket === undefined) return 'fetch failed';
  return socket.code && !socket.message.includes(socket.code) ? `${socket.code}: ${socket.message}` : socket.message;
}

const DEFAULT_ENDPOINTS: Partial<Record<string, string>> = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com/v1' };

function endpoint(provider: ProviderDefinition): string {
  return provider.baseURL ?? DEFAULT_ENDPOINTS[provider.protocol] ?? provider.protocol;
}
