import type { ProviderDefinition, ProviderProtocol } from '../providers/provider-config';

/** The wire protocol families the gateway speaks, each at its own paths. */
export type WireProtocol = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';

/** A call's token counts, read from the protocol's own usage fields; input is the uncached part. */
export interface CallUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export const NO_USAGE: CallUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** The route a request's path names: its protocol, and the path to call upstream (after the version prefix). */
export interface Route {
  protocol: WireProtocol;
  upstreamPath: string;
  /** The model the path names (Gemini), else null: the body names it. */
  pathModel: string | null;
  /** Gemini's streaming method (`:streamGenerateContent`), the others say so in the body. */
  pathStreams: boolean;
}

const GEMINI = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/** The route of a request path (without its query), or null for a path the gateway does not serve. */
export function routeOf(pathname: string): Route | null {
  if (pathname === '/v1/chat/completions') return { protocol: 'openai-chat', upstreamPath: '/chat/completions', pathModel: null, pathStreams: false };
  if (pathname === '/v1/responses') return { protocol: 'openai-responses', upstreamPath: '/responses', pathModel: null, pathStreams: false };
  if (pathname === '/v1/messages' || pathname === '/v1/messages/count_tokens') {
    return { protocol: 'anthropic', upstreamPath: pathname.slice('/v1'.length), pathModel: null, pathStreams: false };
  }
  const gemini = GEMINI.exec(pathname);
  if (gemini) {
    return {
      protocol: 'gemini',
      upstreamPath: pathname.slice('/v1beta'.length),
      pathModel: decodeURIComponent(gemini[1]),
      pathStreams: gemini[2] === 'streamGenerateContent',
    };
  }
  return null;
}

/** Which wire protocols a provider of each configured protocol answers. */
const SERVED: Record<ProviderProtocol, readonly WireProtocol[]> = {
  openai: ['openai-chat', 'openai-responses'],
  'openai-compatible': ['openai-chat', 'openai-responses'],
  'openai-responses': ['openai-chat', 'openai-responses'],
  anthropic: ['anthropic'],
  gemini: ['gemini'],
};

export function serves(provider: ProviderDefinition, protocol: WireProtocol): boolean {
  return SERVED[provider.protocol].includes(protocol);
}

const DEFAULT_BASE: Record<ProviderProtocol, string> = {
  openai: 'https://api.openai.com/v1',
  'openai-compatible': 'https://api.openai.com/v1',
  'openai-responses': 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  gemini: 'https://generativelanguage.googleapis.com/v1beta',
};

/** The upstream URL of a routed call: the provider's base URL (its version prefix included) and the route's path. */
export function upstreamUrl(provider: ProviderDefinition, route: Route, search: string): string {
  const base = (provider.baseURL ?? DEFAULT_BASE[provider.protocol]).replace(/\/+$/, '');
  return `${base}${route.upstreamPath}${search}`;
}

/** The token the agent presents: a bearer token, Anthropic's x-api-key, or Gemini's x-goog-api-key or `key` parameter. */
export function presentedToken(headers: Record<string, string | string[] | undefined>, query: URLSearchParams): string | null {
  const bearer = /^Bearer\s+(\S+)$/i.exec(single(headers.authorization) ?? '');
  return bearer?.[1] ?? single(headers['x-api-key']) ?? single(headers['x-goog-api-key']) ?? query.get('key');
}

/** The header that carries the real key upstream. */
export function upstreamAuth(protocol: WireProtocol, key: string): Record<string, string> {
  if (protocol === 'anthropic') return { 'x-api-key': key };
  if (protocol === 'gemini') return { 'x-goog-api-key': key };
  return { authorization: `Bearer ${key}` };
}

/** An error answer in the protocol's own shape, so that the agent's client reads it as its provider's. */
export function errorBody(protocol: WireProtocol, status: number, message: string): unknown {
  if (protocol === 'anthropic') return { type: 'error', error: { type: anthropicType(status), message } };
  if (protocol === 'gemini') return { error: { code: status, message, status: googleStatus(status) } };
  return { error: { message, type: openAIType(status), code: null, param: null } };
}

function anthropicType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 404) return 'not_found_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

function openAIType(status: number): string {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'insufficient_quota';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function googleStatus(status: number): string {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'ABORTED';
  if (status >= 500) return 'UNAVAILABLE';
  return 'INVALID_ARGUMENT';
}

/** The usage of a whole (non-streamed) answer body. */
export function usageOfBody(protocol: WireProtocol, body: unknown): CallUsage | null {
  if (!isObject(body)) return null;
  if (protocol === 'gemini') return geminiUsage(body.usageMetadata);
  if (protocol === 'anthropic') return anthropicUsage(body.usage);
  if (protocol === 'openai-responses') return responsesUsage(body.usage);
  return chatUsage(body.usage);
}

/**
 * Reads a streamed answer's usage from its server-sent events as they pass: OpenAI chat's final
 * chunk (the gateway asks for it with `stream_options.include_usage`), the Responses API's
 * `response.completed`, Anthropic's `message_start` and `message_delta`, Gemini's last
 * `usageMetadata`.
 */
export class StreamUsage {
  private pending = '';
  private found: CallUsage | null = null;

  constructor(private readonly protocol: WireProtocol) {}

  push(chunk: Buffer): void {
    this.pending += chunk.toString('utf8');
    let end = this.pending.indexOf('\n');
    while (end >= 0) {
      const line = this.pending.slice(0, end).replace(/\r$/, '');
      this.pending = this.pending.slice(end + 1);
      if (line.startsWith('data:')) this.event(line.slice(5).trim());
      end = this.pending.indexOf('\n');
    }
    // A line without its end is kept for the next chunk, but never grows without bound.
    if (this.pending.length > 1_000_000) this.pending = '';
  }

  get usage(): CallUsage | null {
    return this.found;
  }

  private event(data: string): void {
    if (data === '' || data === '[DONE]') return;
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(event)) return;
    if (this.protocol === 'openai-chat') {
      this.found = chatUsage(event.usage) ?? this.found;
    } else if (this.protocol === 'openai-responses') {
      if (event.type === 'response.completed' && isObject(event.response)) this.found = responsesUsage(event.response.usage) ?? this.found;
    } else if (this.protocol === 'gemini') {
      this.found = geminiUsage(event.usageMetadata) ?? this.found;
    } else if (event.type === 'message_start' && isObject(event.message)) {
      this.found = anthropicUsage(event.message.usage) ?? this.found;
    } else if (event.type === 'message_delta' && isObject(event.usage)) {
      const delta = event.usage;
      const base = this.found ?? NO_USAGE;
      this.found = { ...base, outputTokens: count(delta.output_tokens) ?? base.outputTokens };
    }
  }
}

function chatUsage(usage: unknown): CallUsage | null {
  if (!isObject(usage)) return null;
  const prompt = count(usage.prompt_tokens) ?? 0;
  const cached = isObject(usage.prompt_tokens_details) ? (count(usage.prompt_tokens_details.cached_tokens) ?? 0) : 0;
  return { inputTokens: Math.max(0, prompt - cached), outputTokens: count(usage.completion_tokens) ?? 0, cacheReadTokens: cached, cacheWriteTokens: 0 };
}

function responsesUsage(usage: unknown): CallUsage | null {
  if (!isObject(usage)) return null;
  const input = count(usage.input_tokens) ?? 0;
  const cached = isObject(usage.input_tokens_details) ? (count(usage.input_tokens_details.cached_tokens) ?? 0) : 0;
  return { inputTokens: Math.max(0, input - cached), outputTokens: count(usage.output_tokens) ?? 0, cacheReadTokens: cached, cacheWriteTokens: 0 };
}

function anthropicUsage(usage: unknown): CallUsage | null {
  if (!isObject(usage)) return null;
  return {
    inputTokens: count(usage.input_tokens) ?? 0,
    outputTokens: count(usage.output_tokens) ?? 0,
    cacheReadTokens: count(usage.cache_read_input_tokens) ?? 0,
    cacheWriteTokens: count(usage.cache_creation_input_tokens) ?? 0,
  };
}

function geminiUsage(usage: unknown): CallUsage | null {
  if (!isObject(usage)) return null;
  const prompt = count(usage.promptTokenCount) ?? 0;
  const cached = count(usage.cachedContentTokenCount) ?? 0;
  const output = (count(usage.candidatesTokenCount) ?? 0) + (count(usage.thoughtsTokenCount) ?? 0);
  return { inputTokens: Math.max(0, prompt - cached), outputTokens: output, cacheReadTokens: cached, cacheWriteTokens: 0 };
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function single(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}
