import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A model provider run by the test itself: real HTTP on 127.0.0.1 speaking the providers'
 * protocols, OpenAI chat completions (`POST /v1/chat/completions`), OpenAI Responses
 * (`POST /v1/responses`), Anthropic messages (`POST /v1/messages`) and Gemini
 * (`POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`), streamed or not,
 * with scripted answers and token usage. The only fake the tests
 * allow besides remote sandbox vendors: no test reaches a real provider.
 *
 * Error answers carry `retry-after-ms: 1`, as OpenAI's own do, so the SDK's retries of a 5xx or
 * 429 cost milliseconds rather than its 2 s and 4 s backoff.
 */
export interface FakeAnswer {
  text?: string;
  /** A structured answer: JSON content (OpenAI, Anthropic's JSON output), or a tool_use block when a tool was forced. */
  object?: unknown;
  usage?: { input: number; output: number };
  status?: number;
  error?: string;
  /** Never answers, until the fake is closed. */
  hang?: boolean;
  /** A streamed answer sends its first event, then waits for this before the rest. */
  holdAfterFirst?: () => Promise<void>;
  delayMs?: number;
}

export interface FakeRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  protocol: 'openai' | 'anthropic' | 'responses' | 'gemini';
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

export async function startFakeProvider(): Promise<FakeProvider> {
  const requests: FakeRequest[] = [];
  const queue: ScriptedAnswer[] = [];
  let fallback: ScriptedAnswer = DEFAULT_ANSWER;
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const pathname = (incoming.url ?? '').split('?')[0];
      const protocol = GEMINI_PATH.test(pathname) ? 'gemini' : PATHS[pathname];
      if (incoming.method !== 'POST' || protocol === undefined) {
        sendJson(response, 404, { error: { message: `no route for ${incoming.method} ${incoming.url}` } });
        return;
      }
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        sendJson(response, 400, errorBody(protocol, 'the body is not JSON'));
        return;
      }
      const request: FakeRequest = { path: incoming.url ?? '', headers: { ...incoming.headers }, body, protocol };
      requests.push(request);
      const scripted = queue.shift() ?? fallback;
      const answer = typeof scripted === 'function' ? scripted(request) : scripted;
      if (answer.hang) {
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const send = () => reply(response, request, answer);
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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

function reply(response: http.ServerResponse, request: FakeRequest, answer: FakeAnswer): void {
  if (response.destroyed) return;
  if (answer.status !== undefined && answer.status >= 400) {
    response.setHeader('retry-after-ms', '1');
    sendJson(response, answer.status, errorBody(request.protocol, answer.error ?? `scripted HTTP ${answer.status}`));
    return;
  }
  const usage = answer.usage ?? DEFAULT_ANSWER.usage!;
  const streaming = request.body?.stream === true || request.path.includes(':streamGenerateContent');
  if (request.protocol === 'responses' || request.protocol === 'gemini') {
    const text = answer.object !== undefined ? JSON.stringify(answer.object) : (answer.text ?? '');
    const events = request.protocol === 'responses' ? responsesEvents(request, text, usage) : geminiEvents(text, usage);
    if (streaming) void streamEvents(response, events.stream, answer.holdAfterFirst);
    else sendJson(response, 200, events.whole);
    return;
  }
  if (request.protocol === 'openai') {
    const content = answer.object !== undefined ? JSON.stringify(answer.object) : (answer.text ?? '');
    if (streaming) streamOpenAI(response, request, content, usage, answer.holdAfterFirst);
    else sendJson(response, answer.status ?? 200, openAICompletion(request, content, usage));
    return;
  }
  const block = anthropicBlock(request, answer);
  if (streaming) streamAnthropic(response, request, block, usage);
  else sendJson(response, answer.status ?? 200, anthropicMessage(request, block, usage));
}

function errorBody(protocol: FakeRequest['protocol'], message: string): unknown {
  if (protocol === 'anthropic') return { type: 'error', error: { type: 'api_error', message } };
  if (protocol === 'gemini') return { error: { code: 500, message, status: 'INTERNAL' } };
  return { error: { message, type: 'server_error', code: null } };
}

/** Writes SSE events one by one, the first alone until `hold` (when given) resolves. */
async function streamEvents(response: http.ServerResponse, events: Array<[string | null, unknown]>, hold?: () => Promise<void>): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [index, [name, data]] of events.entries()) {
    if (response.destroyed) return;
    response.write(`${name === null ? '' : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`);
    if (index === 0 && hold) await hold();
  }
  response.end();
}

/** The OpenAI Responses API's answer: whole, or as its stream's events (usage in `response.completed`). */
function responsesEvents(request: FakeRequest, text: string, usage: { input: number; output: number }) {
  const whole = {
    id: 'resp_fake',
    object: 'response',
    status: 'completed',
    model: request.body.model,
    output: [{ type: 'message', id: 'msg_fake', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }],
    usage: { input_tokens: usage.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: usage.output, total_tokens: usage.input + usage.output },
  };
  const stream: Array<[string | null, unknown]> = [
    ['response.created', { type: 'response.created', response: { ...whole, status: 'in_progress', output: [], usage: null } }],
    ['response.output_text.delta', { type: 'response.output_text.delta', item_id: 'msg_fake', output_index: 0, content_index: 0, delta: text }],
    ['response.completed', { type: 'response.completed', response: whole }],
  ];
  return { whole, stream };
}

/** Gemini's answer: whole, or as `alt=sse` chunks, each with the usage so far. */
function geminiEvents(text: string, usage: { input: number; output: number }) {
  const metadata = { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output };
  const candidate = (part: string, finish: string | null) => ({
    content: { role: 'model', parts: [{ text: part }] },
    ...(finish ? { finishReason: finish } : {}),
  });
  const whole = { candidates: [candidate(text, 'STOP')], usageMetadata: metadata, modelVersion: 'fake' };
  const stream: Array<[string | null, unknown]> = [
    [null, { candidates: [candidate(text, null)], usageMetadata: { promptTokenCount: usage.input, totalTokenCount: usage.input } }],
    [null, { candidates: [candidate('', 'STOP')], usageMetadata: metadata }],
  ];
  return { whole, stream };
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

const openAIUsage = (usage: { input: number; output: number }) => ({
  prompt_tokens: usage.input,
  completion_tokens: usage.output,
  total_tokens: usage.input + usage.output,
});

function openAICompletion(request: FakeRequest, content: string, usage: { input: number; output: number }): unknown {
  return {
    id: `chatcmpl-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.body.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: openAIUsage(usage),
  };
}

function streamOpenAI(
  response: http.ServerResponse,
  request: FakeRequest,
  content: string,
  usage: { input: number; output: number },
  hold?: () => Promise<void>,
): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: unknown, finish: string | null, extra: Record<string, unknown> = {}) => ({
    id: 'chatcmpl-stream',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: request.body.model,
    choices: delta === null ? [] : [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  const events = [chunk({ role: 'assistant', content }, null), chunk({}, 'stop'), chunk(null, null, { usage: openAIUsage(usage) })];
  void (async () => {
    for (const [index, event] of events.entries()) {
      if (response.destroyed) return;
      response.write(`data: ${JSON.stringify(event)}\n\n`);
      if (index === 0 && hold) await hold();
    }
    response.end('data: [DONE]\n\n');
  })();
}

type AnthropicBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

/** A forced tool (how the SDK asks models without native JSON output) is answered with a tool_use block. */
function anthropicBlock(request: FakeRequest, answer: FakeAnswer): AnthropicBlock {
  const choice = request.body?.tool_choice;
  const tools: Array<{ name: string }> = request.body?.tools ?? [];
  const forced = choice?.type === 'tool' ? String(choice.name) : choice?.type === 'any' && tools.length === 1 ? tools[0].name : null;
  if (answer.object !== undefined && forced !== null) return { type: 'tool_use', id: 'toolu_fake', name: forced, input: answer.object };
  return { type: 'text', text: answer.object !== undefined ? JSON.stringify(answer.object) : (answer.text ?? '') };
}

const anthropicUsage = (usage: { input: number; output: number }) => ({
  input_tokens: usage.input,
  output_tokens: usage.output,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

function anthropicMessage(request: FakeRequest, block: AnthropicBlock, usage: { input: number; output: number }): unknown {
  return {
    id: `msg_${Date.now()}`,
    type: 'message',
    role: 'assistant',
    model: request.body.model,
    content: [block],
    stop_reason: block.type === 'tool_use' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: anthropicUsage(usage),
  };
}

function streamAnthropic(response: http.ServerResponse, request: FakeRequest, block: AnthropicBlock, usage: { input: number; output: number }): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const start = block.type === 'text' ? { type: 'text', text: '' } : { type: 'tool_use', id: block.id, name: block.name, input: {} };
  const delta = block.type === 'text' ? { type: 'text_delta', text: block.text } : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
  const events: Array<[string, unknown]> = [
    ['message_start', { type: 'message_start', message: { ...(anthropicMessage(request, block, usage) as object), content: [], stop_reason: null } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: start }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: block.type === 'tool_use' ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  ];
  for (const [name, data] of events) response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  response.end();
}
