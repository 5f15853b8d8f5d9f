import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A model provider run by the test itself: real HTTP on 127.0.0.1 speaking the providers'
 * protocols, OpenAI chat completions (`POST /v1/chat/completions`), OpenAI Responses
 * (`POST /v1/responses`), Anthropic messages (`POST /v1/messages`) and Gemini
 * (`POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`), streamed or not,
 * with scripted answers (text, JSON or one tool call) and token usage. The only fake the tests
 * allow besides remote sandbox vendors: no test reaches a real provider.
 *
 * It also answers what coding-agent CLIs call besides the model (`/api/hello`, the model list,
 * Anthropic's `count_tokens`, Gemini's `:countTokens`); those calls are not recorded and take no
 * scripted answer.
 *
 * Error answers carry `retry-after-ms: 1`, as OpenAI's own do, so the SDK's retries of a 5xx or
 * 429 cost milliseconds rather than its 2 s and 4 s backoff.
 */
export interface FakeAnswer {
  text?: string;
  /** A structured answer: JSON content (OpenAI, Anthropic's JSON output), or a tool_use block when a tool was forced. */
  object?: unknown;
  /** The answer is this one tool call, in the protocol's own shape (it wins over text and object). */
  toolCall?: FakeToolCall;
  /** A streamed text answer comes in this many pieces of about equal length (default 1), as real models send it. */
  chunks?: number;
  usage?: FakeUsage;
  status?: number;
  error?: string;
  /** Never answers, until the fake is closed. */
  hang?: boolean;
  /** A streamed answer sends its first event, then waits for this before the rest. */
  holdAfterFirst?: () => Promise<void>;
  delayMs?: number;
}

export interface FakeToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface FakeUsage {
  input: number;
  output: number;
}

export interface FakeRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  protocol: 'openai' | 'anthropic' | 'responses' | 'gemini';
  /** The usage the fake reported in its answer; null until it answered, and for an error or a hang. */
  answered: FakeUsage | null;
}

export type ScriptedAnswer = FakeAnswer | ((request: FakeRequest) => FakeAnswer);

export interface FakeProvider {
  /** The base URL for openai and openai-compatible providers: `http://127.0.0.1:PORT/v1`. */
  url: string;
  /** The base URL for an anthropic provider (what @ai-sdk/anthropic's baseURL expects). */
  anthropicURL: string;
  /** The base URL for a gemini provider: `http://127.0.0.1:PORT/v1beta`. */
  geminiURL: string;
  requests: FakeRequest[];
  /** Queued in order; once the queue is empty, the default answer. */
  answer(...answers: ScriptedAnswer[]): void;
  setDefault(answer: ScriptedAnswer): void;
  close(): Promise<void>;
}

const DEFAULT_ANSWER: FakeAnswer = { text: 'ok', usage: { input: 10, output: 2 } };
const PATHS: Partial<Record<string, FakeRequest['protocol']>> = { '/v1/chat/completions': 'openai', '/v1/messages': 'anthropic', '/v1/responses': 'responses' };
const GEMINI_PATH = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/;

/** `port`: listen on this one (a test that stopped a fake starts it again where its server calls). */
export async function startFakeProvider(listenPort = 0): Promise<FakeProvider> {
  const requests: FakeRequest[] = [];
  const queue: ScriptedAnswer[] = [];
  let fallback: ScriptedAnswer = DEFAULT_ANSWER;
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const pathname = (incoming.url ?? '').split('?')[0];
      const raw = Buffer.concat(chunks).toString('utf8');
      const side = sideRoute(incoming.method ?? '', pathname, raw);
      if (side !== null) {
        sendJson(response, 200, side);
        return;
      }
      const protocol = GEMINI_PATH.test(pathname) ? 'gemini' : PATHS[pathname];
      if (incoming.method !== 'POST' || protocol === undefined) {
        sendJson(response, 404, { error: { message: `no route for ${incoming.method} ${incoming.url}` } });
        return;
      }
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        sendJson(response, 400, errorBody(protocol, 'the body is not JSON'));
        return;
      }
      const request: FakeRequest = { path: incoming.url ?? '', headers: { ...incoming.headers }, body, protocol, answered: null };
      const callId = `fake_${requests.length}`;
      requests.push(request);
      const scripted = queue.shift() ?? fallback;
      const answer = typeof scripted === 'function' ? scripted(request) : scripted;
      if (answer.hang) {
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const send = () => reply(response, request, answer, callId);
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}/v1`;
  return {
    url: base,
    anthropicURL: base,
    geminiURL: `http://127.0.0.1:${port}/v1beta`,
    requests,
    answer: (...answers) => queue.push(...answers),
    setDefault: (answer) => {
      fallback = answer;
    },
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const MODEL_LIST = {
  object: 'list',
  data: [{ id: 'fake-model', object: 'model', type: 'model', display_name: 'Fake model', created: 0, created_at: '2025-01-01T00:00:00Z', owned_by: 'fake' }],
  has_more: false,
  first_id: 'fake-model',
  last_id: 'fake-model',
};

/** What the CLIs call besides the model: a reachability probe, the model list, token counts (about 4 characters a token). */
function sideRoute(method: string, pathname: string, raw: string): unknown {
  const tokens = Math.max(1, Math.ceil(raw.length / 4));
  if ((method === 'HEAD' || method === 'GET') && pathname === '/api/hello') return {};
  if (method === 'GET' && pathname === '/v1/models') return MODEL_LIST;
  if (method === 'POST' && pathname === '/v1/messages/count_tokens') return { input_tokens: tokens };
  if (method === 'POST' && /^\/v1beta\/models\/[^/:]+:countTokens$/.test(pathname)) return { totalTokens: tokens };
  return null;
}

/** One answer in the terms every protocol encodes: text (or JSON as text, streamed in `pieces`), or one tool call with the call's own id. */
interface Turn {
  model: unknown;
  text: string;
  pieces: string[];
  toolCall: (FakeToolCall & { id: string }) | null;
  usage: FakeUsage;
}

/** A protocol's answer, whole or as SSE events (`[event name or null, data]`); `done` ends the stream with `data: [DONE]`. */
interface Wire {
  whole: unknown;
  stream: Array<[string | null, unknown]>;
  done?: boolean;
}

function reply(response: http.ServerResponse, request: FakeRequest, answer: FakeAnswer, callId: string): void {
  if (response.destroyed) return;
  if (answer.status !== undefined && answer.status >= 400) {
    response.setHeader('retry-after-ms', '1');
    sendJson(response, answer.status, errorBody(request.protocol, answer.error ?? `scripted HTTP ${answer.status}`));
    return;
  }
  const usage = answer.usage ?? DEFAULT_ANSWER.usage!;
  const streaming = request.body?.stream === true || request.path.includes(':streamGenerateContent');
  const text = answer.object !== undefined ? JSON.stringify(answer.object) : (answer.text ?? '');
  const turn: Turn = {
    model: request.body?.model,
    text,
    pieces: splitText(text, answer.chunks ?? 1),
    toolCall: answer.toolCall ? { ...answer.toolCall, id: callId } : null,
    usage,
  };
  const wire =
    request.protocol === 'responses'
      ? responsesWire(turn)
      : request.protocol === 'gemini'
        ? geminiWire(turn)
        : request.protocol === 'openai'
          ? openAIWire(turn)
          : anthropicWire(turn, anthropicBlock(request, answer, turn));
  request.answered = { ...usage };
  if (streaming) void streamEvents(response, wire, answer.holdAfterFirst);
  else sendJson(response, answer.status ?? 200, wire.whole);
}

function errorBody(protocol: FakeRequest['protocol'], message: string): unknown {
  if (protocol === 'anthropic') return { type: 'error', error: { type: 'api_error', message } };
  if (protocol === 'gemini') return { error: { code: 500, message, status: 'INTERNAL' } };
  return { error: { message, type: 'server_error', code: null } };
}

/** Writes SSE events one by one, the first alone until `hold` (when given) resolves. */
async function streamEvents(response: http.ServerResponse, wire: Wire, hold?: () => Promise<void>): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [index, [name, data]] of wire.stream.entries()) {
    if (response.destroyed) return;
    response.write(`${name === null ? '' : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`);
    if (index === 0 && hold) await hold();
  }
  response.end(wire.done ? 'data: [DONE]\n\n' : undefined);
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** The OpenAI Responses API's answer: one output item (a message, or a function_call), usage in `response.completed`. */
function responsesWire({ model, text, pieces, toolCall, usage }: Turn): Wire {
  const item = toolCall
    ? {
        type: 'function_call',
        id: `fc_${toolCall.id}`,
        call_id: `call_${toolCall.id}`,
        name: toolCall.name,
        arguments: JSON.stringify(toolCall.arguments),
        status: 'completed',
      }
    : { type: 'message', id: 'msg_fake', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  const whole = {
    id: 'resp_fake',
    object: 'response',
    status: 'completed',
    model,
    output: [item],
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    },
  };
  const started = toolCall ? { ...item, status: 'in_progress', arguments: '' } : { ...item, status: 'in_progress', content: [] };
  const deltas = toolCall
    ? [{ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: 0, delta: item.arguments }]
    : pieces.map((piece) => ({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: piece }));
  const stream: Wire['stream'] = [
    ['response.created', { type: 'response.created', response: { ...whole, status: 'in_progress', output: [], usage: null } }],
    ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: started }],
    ...deltas.map((delta): [string, unknown] => [delta.type, delta]),
    ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
    ['response.completed', { type: 'response.completed', response: whole }],
  ];
  return { whole, stream };
}

/** Gemini's answer: whole, or as `alt=sse` chunks, each with the usage so far (a text's last chunk is empty and carries the finish). */
function geminiWire({ text, pieces, toolCall, usage }: Turn): Wire {
  const metadata = { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output };
  const candidate = (parts: unknown[], finish: string | null) => ({ content: { role: 'model', parts }, ...(finish ? { finishReason: finish } : {}) });
  // Streamed chunks name no modelVersion, so Gemini CLI keys its per-model stats by the model it asked for.
  const finished = (parts: unknown[]) => ({ candidates: [candidate(parts, 'STOP')], usageMetadata: metadata });
  const whole = (parts: unknown[]) => ({ ...finished(parts), modelVersion: 'fake' });
  if (toolCall) {
    const parts = [{ functionCall: { name: toolCall.name, args: toolCall.arguments } }];
    return { whole: whole(parts), stream: [[null, finished(parts)]] };
  }
  const partial = { promptTokenCount: usage.input, totalTokenCount: usage.input };
  const stream: Wire['stream'] = [
    ...pieces.map((piece): [null, unknown] => [null, { candidates: [candidate([{ text: piece }], null)], usageMetadata: partial }]),
    [null, finished([{ text: '' }])],
  ];
  return { whole: whole([{ text }]), stream };
}

/** The text in at most `count` pieces of about equal length (split by code point), at least one. */
function splitText(text: string, count: number): string[] {
  const characters = Array.from(text);
  const size = Math.max(1, Math.ceil(characters.length / count));
  const pieces: string[] = [];
  for (let start = 0; start < characters.length; start += size) pieces.push(characters.slice(start, start + size).join(''));
  return pieces.length > 0 ? pieces : [''];
}

/** OpenAI chat completions: content or `tool_calls`; the stream ends with a usage chunk (what `stream_options.include_usage` asks). */
function openAIWire({ model, text, pieces, toolCall, usage }: Turn): Wire {
  const call = toolCall && { id: `call_${toolCall.id}`, type: 'function', function: { name: toolCall.name, arguments: JSON.stringify(toolCall.arguments) } };
  const finish = call ? 'tool_calls' : 'stop';
  const openAIUsage = { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output };
  const whole = {
    id: `chatcmpl-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      { index: 0, message: call ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: text }, finish_reason: finish },
    ],
    usage: openAIUsage,
  };
  const chunk = (delta: unknown, finishReason: string | null, extra: Record<string, unknown> = {}): [null, unknown] => [
    null,
    {
      id: 'chatcmpl-stream',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: delta === null ? [] : [{ index: 0, delta, finish_reason: finishReason }],
      ...extra,
    },
  ];
  const deltas = call
    ? [
        chunk(
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }],
          },
          null,
        ),
        chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }, null),
      ]
    : pieces.map((piece, index) => chunk(index === 0 ? { role: 'assistant', content: piece } : { content: piece }, null));
  return { whole, stream: [...deltas, chunk({}, finish), chunk(null, null, { usage: openAIUsage })], done: true };
}

type AnthropicBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

/** A scripted tool call, or a forced tool (how the SDK asks models without native JSON output) answered with a tool_use block. */
function anthropicBlock(request: FakeRequest, answer: FakeAnswer, turn: Turn): AnthropicBlock {
  if (turn.toolCall) return { type: 'tool_use', id: `toolu_${turn.toolCall.id}`, name: turn.toolCall.name, input: turn.toolCall.arguments };
  const choice = request.body?.tool_choice;
  const tools: Array<{ name: string }> = request.body?.tools ?? [];
  const forced = choice?.type === 'tool' ? String(choice.name) : choice?.type === 'any' && tools.length === 1 ? tools[0].name : null;
  if (answer.object !== undefined && forced !== null) return { type: 'tool_use', id: 'toolu_fake', name: forced, input: answer.object };
  return { type: 'text', text: turn.text };
}

function anthropicWire({ model, pieces, usage }: Turn, block: AnthropicBlock): Wire {
  const stopReason = block.type === 'tool_use' ? 'tool_use' : 'end_turn';
  const whole = {
    id: `msg_${Date.now()}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [block],
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
  const start = block.type === 'text' ? { type: 'text', text: '' } : { type: 'tool_use', id: block.id, name: block.name, input: {} };
  const deltas =
    block.type === 'text'
      ? pieces.map((piece) => ({ type: 'text_delta', text: piece }))
      : [{ type: 'input_json_delta', partial_json: JSON.stringify(block.input) }];
  const stream: Wire['stream'] = [
    ['message_start', { type: 'message_start', message: { ...whole, content: [], stop_reason: null } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: start }],
    ...deltas.map((delta): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index: 0, delta }]),
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output } }],
    ['message_stop', { type: 'message_stop' }],
  ];
  return { whole, stream };
}
