import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ModelBudget } from '#shared/eval-definitions';
import { reportProviderCall } from '../execution-observers';
import { canonicalJson } from '#shared/hash';
import type { ReplaySource, TrajectoryModelCall } from '../contract';
import type { ProviderDefinition } from '../providers/provider-config';
import { CallUsage, errorBody, presentedToken, Route, routeOf, serves, StreamUsage, upstreamAuth, upstreamUrl, usageOfBody, WireProtocol } from './protocols';

const SOCKET_NAME = 'gateway.sock';
/** What a request is matched on in a replay: its protocol and its body as canonical JSON (the token is never in it). */
function replayKey(protocol: WireProtocol, raw: Buffer | string): string {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `${protocol}\n${text}`;
  }
  return `${protocol}\n${canonicalJson(value)}`;
}

function recordedAnswers(replay: ReplaySource | null): Map<string, ReplaySource['calls']> {
  const answers = new Map<string, ReplaySource['calls']>();
  for (const call of replay?.calls ?? []) {
    const key = replayKey(call.protocol, call.request);
    answers.set(key, [...(answers.get(key) ?? []), call]);
  }
  return answers;
}

/** How much of each call's request and answer `recordBodies` keeps. */
const MAX_RECORDED_BODY_BYTES = 1024 * 1024;

/**
 * The first bound of the grant's budget that is past: with `next`, counting the call about to be
 * made (a call is refused once the calls or the tokens have reached their bound, or the dollars
 * theirs); without, what the calls made went beyond. Unpriced calls count no dollars.
 */
function spentPast(grant: LiveGrant, next: boolean): string | null {
  const budget = grant.terms.budget;
  if (budget === null) return null;
  const calls = grant.calls.length + (next ? 1 : 0);
  if (budget.maxModelCalls !== undefined && calls > budget.maxModelCalls) return `maxModelCalls (${calls} of ${budget.maxModelCalls})`;
  const tokens = grant.calls.reduce((total, call) => total + call.inputTokens + call.outputTokens + call.cacheReadTokens + call.cacheWriteTokens, 0);
  if (budget.maxTokens !== undefined && (next ? tokens >= budget.maxTokens : tokens > budget.maxTokens)) return `maxTokens (${tokens} of ${budget.maxTokens})`;
  const usd = grant.calls.reduce((total, call) => total + (grant.terms.price(call) ?? 0), 0);
  if (budget.maxUsd !== undefined && (next ? usd >= budget.maxUsd : usd > budget.maxUsd)) return `maxUsd (${round(usd)} of ${budget.maxUsd})`;
  return null;
}

function round(usd: number): number {
  return Math.round(usd * 1_000_000) / 1_000_000;
}

/** The largest request body the gateway forwards: far above any model call's, far below memory's limits. */
const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** How much of a whole (non-streamed) answer is kept to read its usage; the answer itself passes whatever its size. */
const MAX_USAGE_BODY_BYTES = 8 * 1024 * 1024;

/** Request headers never forwarded: the hop's own, and every header that could carry the trial's token. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'content-length',
  'accept-encoding',
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'proxy-authorization',
  'cookie',
]);
/** Answer headers passed back: what clients read (type, ids, rate limits, retry hints). */
const PASSED_RESPONSE_HEADER = /^(content-type|retry-after|retry-after-ms|x-request-id|request-id|openai-.*|anthropic-.*|x-ratelimit-.*)$/i;

/** What one trial may call: its provider, with the real key, which never leaves the gateway. */
export interface GrantTerms {
  trialId: string;
  provider: ProviderDefinition;
  apiKey: string;
  /** Per call, streamed answers included. */
  timeoutMs: number;
  /** What the trial may spend; a call past it is refused with 429. */
  budget: ModelBudget | null;
  /** The connector integration the key came from; null: a server variable (or no key). */
  keyConnector: string | null;
  /** Recorded calls that answer this grant's, by request; null: every call goes upstream. */
  replay: ReplaySource | null;
  /** Keep each call's request and answer bodies (`bodies`), as they passed, up to MAX_RECORDED_BODY_BYTES each. */
  recordBodies: boolean;
  /** US dollars a call cost, from the configured prices; null when its model has no price. */
  price(call: TrajectoryModelCall): number | null;
}

/**
 * One trial's access to its model: a URL and a token of its own. The token is valid until the
 * grant is revoked (the trial ended), for the grant's provider only.
 */
export interface GatewayGrant {
  readonly url: string;
  /** The gateway's loopback port, which a sandbox without a network forwards to `socket`. */
  readonly port: number;
  /** The gateway's unix socket, bound into sandboxes without a network. */
  readonly socket: string;
  readonly token: string;
  readonly provider: ProviderDefinition;
  /** The calls made so far, in the order they finished. */
  readonly calls: readonly TrajectoryModelCall[];
  /** With `recordBodies`, each call's request and answer as they passed (unredacted), by the call's place in `calls`. */
  readonly bodies: readonly CallBodies[];
  /** The provider failures the gateway saw (5xx, unreachable, timed out, a refused key), in order. */
  readonly failures: readonly string[];
  /** The provider refused the key (HTTP 401 or 403). */
  readonly keyRefused: boolean;
  /** A call a strict replay had no recorded answer for (`gpt-x (openai-chat)`), once there was one; else null. */
  readonly replayMiss: string | null;
  /** The connector integration the key came from; null: a server variable (or no key). */
  readonly keyConnector: string | null;
  /** The bound the agent went past (`maxTokens (1500 of 1000)`), once a call was refused for it or its calls exceeded it; else null. */
  readonly overBudget: string | null;
  /** The agent's turn the calls from now on belong to. */
  turn: number;
  revoke(): void;
}

/** A call's request and answer bodies as they passed the gateway; `truncated`: one was longer than the gateway keeps. */
export interface CallBodies {
  request: string;
  response: string;
  truncated: boolean;
}

interface LiveGrant extends GatewayGrant {
  readonly terms: GrantTerms;
  calls: TrajectoryModelCall[];
  bodies: CallBodies[];
  failures: string[];
  keyRefused: boolean;
  replayMiss: string | null;
  /** The recorded answers left, by request (replayKey), each used once in its order. */
  recorded: Map<string, ReplaySource['calls']>;
  revoked: boolean;
  refusedFor: string | null;
  readonly overBudget: string | null;
}

/**
 * The model gateway: an HTTP server on a loopback port of this process that speaks the
 * providers' own protocols (OpenAI chat completions and Responses, Anthropic messages, Gemini)
 * at their own paths. A trial's agent is given the gateway's origin and a token of its own; the
 * gateway swaps the token for the provider's real key and forwards the call upstream, passing
 * the answer back as it arrives (server-sent events chunk by chunk), and meters each call from the
 * protocol's usage fields. The real key never reaches the trial.
 */
export class ModelGateway {
  private readonly grants = new Map<string, LiveGrant>();
  private readonly upstreams = new Set<AbortController>();

  private constructor(
    private readonly server: http.Server,
    private readonly socketServer: http.Server,
    readonly url: string,
    /** A directory of its own holding the unix socket (removed when the gateway closes, or the process exits). */
    private readonly socketDir: string,
  ) {}

  /** The unix socket the same handler serves: bubblewrap trials without a network reach the gateway through it. */
  get socket(): string {
    return path.join(this.socketDir, SOCKET_NAME);
  }

  static async start(): Promise<ModelGateway> {
    const handler: { gateway: ModelGateway | null } = { gateway: null };
    const serve = () => {
      const server = http.createServer((request, response) => void handler.gateway?.handle(request, response));
      // Agents keep connections open between calls; the gateway closes idle ones quietly.
      server.keepAliveTimeout = 5000;
      return server;
    };
    const listen = (server: http.Server, where: { port: number; host: string } | { path: string }) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(where, () => resolve());
      });
    const server = serve();
    await listen(server, { port: 0, host: '127.0.0.1' });
    server.unref();
    // 0711: a trial's own user may reach the socket by its path (bound into its sandbox), not list the directory.
    const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-gateway-'));
    fs.chmodSync(socketDir, 0o711);
    process.once('exit', () => fs.rmSync(socketDir, { recursive: true, force: true }));
    const socketServer = serve();
    await listen(socketServer, { path: path.join(socketDir, SOCKET_NAME) });
    socketServer.unref();
    fs.chmodSync(path.join(socketDir, SOCKET_NAME), 0o666);
    const { port } = server.address() as AddressInfo;
    const gateway = new ModelGateway(server, socketServer, `http://127.0.0.1:${port}`, socketDir);
    handler.gateway = gateway;
    return gateway;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** A new token for one trial's calls to its provider. */
  grant(terms: GrantTerms): GatewayGrant {
    const token = `assay-gw-${randomBytes(24).toString('base64url')}`;
    const grants = this.grants;
    const grant: LiveGrant = {
      url: this.url,
      port: this.port,
      socket: this.socket,
      token,
      terms,
      provider: terms.provider,
      calls: [],
      bodies: [],
      failures: [],
      keyRefused: false,
      replayMiss: null,
      recorded: recordedAnswers(terms.replay),
      keyConnector: terms.keyConnector,
      revoked: false,
      refusedFor: null,
      get overBudget() {
        return grant.refusedFor ?? spentPast(grant, false);
      },
      turn: 1,
      revoke() {
        grant.revoked = true;
        grants.delete(token);
      },
    };
    this.grants.set(token, grant);
    return grant;
  }

  async close(): Promise<void> {
    for (const upstream of this.upstreams) upstream.abort();
    for (const server of [this.server, this.socketServer]) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    fs.rmSync(this.socketDir, { recursive: true, force: true });
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://gateway');
    const route = routeOf(url.pathname);
    if (request.method !== 'POST' || route === null) {
      request.resume();
      answerError(response, route?.protocol ?? 'openai-chat', 404, `The model gateway serves no ${request.method ?? ''} ${url.pathname}.`);
      return;
    }
    const token = presentedToken(request.headers, url.searchParams);
    const grant = token === null ? undefined : this.grants.get(token);
    if (grant === undefined) {
      request.resume();
      const why = token === null ? 'No API key was given.' : "This API key is not valid: a trial's key is valid only while the trial runs.";
      answerError(response, route.protocol, 401, why);
      return;
    }
    if (!serves(grant.provider, route.protocol)) {
      request.resume();
      answerError(
        response,
        route.protocol,
        401,
        `This API key is for the provider "${grant.provider.name}" (${grant.provider.protocol}), which does not speak this protocol.`,
      );
      return;
    }
    const body = await readBody(request);
    if (body === null) {
      answerError(response, route.protocol, 413, `The request body exceeds ${MAX_REQUEST_BYTES} bytes.`);
      return;
    }
    const spent = spentPast(grant, true);
    if (spent !== null) {
      grant.refusedFor ??= spent;
      answerError(response, route.protocol, 429, `This trial's model budget is spent: ${spent}.`);
      return;
    }
    if (grant.terms.replay !== null && this.replayed(grant, route, body, response)) return;
    await this.forward(grant, route, url.search, request, body, response);
  }

  /**
   * Answers from the recording when the request matches a recorded one (true); a strict replay
   * refuses any other with 409 (true); a fallback one leaves it to go upstream (false).
   */
  private replayed(grant: LiveGrant, route: Route, raw: Buffer, response: http.ServerResponse): boolean {
    const startedAtMillis = Date.now();
    const recorded = grant.recorded.get(replayKey(route.protocol, raw))?.shift();
    if (recorded === undefined) {
      if (grant.terms.replay?.mode !== 'strict') return false;
      const parsed = parseJson(raw);
      const what = `${typeof parsed?.model === 'string' ? parsed.model : 'a model'} (${route.protocol})`;
      grant.replayMiss ??= what;
      answerError(
        response,
        route.protocol,
        409,
        `No call recorded in batch ${grant.terms.replay.batchId} matches this request to ${what}: a strict replay answers only recorded calls.`,
      );
      return true;
    }
    response.writeHead(recorded.status, { 'content-type': recorded.stream ? 'text/event-stream' : 'application/json' });
    response.end(recorded.response);
    const { _tag, provider, model, protocol, stream, status, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = recorded;
    const finishedAtMillis = Date.now();
    grant.calls.push({
      _tag,
      provider,
      model,
      protocol,
      turn: grant.turn,
      stream,
      status,
      startedAtMillis,
      finishedAtMillis,
      firstTokenMs: stream ? finishedAtMillis - startedAtMillis : null,
      inputTokens,
      outputTokens,
      cacheReadTokens,
      cacheWriteTokens,
    });
    if (grant.terms.recordBodies) grant.bodies.push({ request: raw.toString('utf8'), response: recorded.response, truncated: false });
    return true;
  }

  private async forward(
    grant: LiveGrant,
    route: Route,
    search: string,
    request: http.IncomingMessage,
    raw: Buffer,
    response: http.ServerResponse,
  ): Promise<void> {
    const startedAtMillis = Date.now();
    const turn = grant.turn;
    const parsed = parseJson(raw);
    const model = route.pathModel ?? (typeof parsed?.model === 'string' ? parsed.model : '');
    const stream = route.pathStreams || parsed?.stream === true;
    let body = raw;
    if (route.protocol === 'openai-chat' && stream && parsed !== null && !isObject(parsed.stream_options)) {
      // The usage of a streamed chat completion comes in a last chunk only when asked for.
      body = Buffer.from(JSON.stringify({ ...parsed, stream_options: { include_usage: true } }));
    }
    // A provider that needs no key (a local model server) gets none.
    const auth = grant.terms.apiKey === '' ? {} : upstreamAuth(route.protocol, grant.terms.apiKey);
    const headers: Record<string, string> = { 'accept-encoding': 'identity', ...auth };
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const query = new URLSearchParams(search);
    query.delete('key');
    const target = upstreamUrl(grant.provider, route, query.size > 0 ? `?${query.toString()}` : '');
    const abort = new AbortController();
    this.upstreams.add(abort);
    const timer = setTimeout(() => abort.abort(new Error(`no answer within ${grant.terms.timeoutMs} ms`)), grant.terms.timeoutMs);
    // The agent hung up: the upstream call is not paid for any longer than it must.
    response.on('close', () => {
      if (!response.writableFinished) abort.abort(new Error('the agent closed the connection'));
    });
    // The answer as it passed, for `recordBodies`: kept up to its bound, the rest counted as cut.
    const answered: Buffer[] = [];
    let answeredBytes = 0;
    let answerCut = false;
    const keepAnswer = (chunk: Buffer) => {
      if (!grant.terms.recordBodies) return;
      if (answeredBytes + chunk.length > MAX_RECORDED_BODY_BYTES) answerCut = true;
      const room = MAX_RECORDED_BODY_BYTES - answeredBytes;
      if (room > 0) answered.push(chunk.subarray(0, room));
      answeredBytes += Math.min(room, chunk.length);
    };
    const record = (status: number, usage: CallUsage | null, firstTokenMs: number | null) => {
      const finishedAtMillis = Date.now();
      if (grant.terms.recordBodies) {
        const requestCut = raw.length > MAX_RECORDED_BODY_BYTES;
        grant.bodies.push({
          request: raw.subarray(0, MAX_RECORDED_BODY_BYTES).toString('utf8'),
          response: Buffer.concat(answered).toString('utf8'),
          truncated: requestCut || answerCut,
        });
      }
      // The server's metrics count the agents' calls with the service's own, by provider and model.
      reportProviderCall({
        provider: grant.provider.name,
        model,
        outcome: callOutcome(status),
        durationMs: finishedAtMillis - startedAtMillis,
        inputTokens: (usage?.inputTokens ?? 0) + (usage?.cacheReadTokens ?? 0) + (usage?.cacheWriteTokens ?? 0),
        outputTokens: usage?.outputTokens ?? 0,
      });
      grant.calls.push({
        _tag: 'model-call',
        provider: grant.provider.name,
        model,
        protocol: route.protocol,
        turn,
        stream,
        status,
        startedAtMillis,
        finishedAtMillis,
        firstTokenMs,
        inputTokens: usage?.inputTokens ?? 0,
        outputTokens: usage?.outputTokens ?? 0,
        cacheReadTokens: usage?.cacheReadTokens ?? 0,
        cacheWriteTokens: usage?.cacheWriteTokens ?? 0,
      });
    };
    try {
      let upstream: http.IncomingMessage;
      try {
        upstream = await post(target, headers, body, abort.signal);
      } catch (error) {
        const reason = abort.signal.aborted ? abortReason(abort.signal) : causeOf(error);
        grant.failures.push(`the provider "${grant.provider.name}" could not be reached: ${reason}`);
        answerError(response, route.protocol, 502, `The provider "${grant.provider.name}" could not be reached: ${reason}.`);
        record(502, null, null);
        return;
      }
      const status = upstream.statusCode ?? 502;
      const ok = status >= 200 && status < 300;
      if (status >= 500) grant.failures.push(`the provider "${grant.provider.name}" answered HTTP ${status}`);
      if (status === 401 || status === 403) {
        grant.keyRefused = true;
        grant.failures.push(`the provider "${grant.provider.name}" refused its key (HTTP ${status})`);
      }
      const passed: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(upstream.headers)) {
        if (value !== undefined && PASSED_RESPONSE_HEADER.test(name)) passed[name] = value;
      }
      response.writeHead(status, passed);
      const events = stream && ok ? new StreamUsage(route.protocol) : null;
      const whole: Buffer[] = [];
      let kept = 0;
      let firstTokenMs: number | null = null;
      try {
        for await (const piece of upstream) {
          const chunk = piece as Buffer;
          firstTokenMs ??= Date.now() - startedAtMillis;
          response.write(chunk);
          keepAnswer(chunk);
          if (events) events.push(chunk);
          else if (kept + chunk.length <= MAX_USAGE_BODY_BYTES) {
            whole.push(chunk);
            kept += chunk.length;
          }
        }
      } catch (error) {
        const reason = abort.signal.aborted ? abortReason(abort.signal) : causeOf(error);
        if (!response.destroyed) grant.failures.push(`the provider "${grant.provider.name}" broke off its answer: ${reason}`);
        response.destroy();
        record(status, events?.usage ?? null, firstTokenMs);
        return;
      }
      response.end();
      const usage = events ? events.usage : ok ? usageOfBody(route.protocol, parseJson(Buffer.concat(whole))) : null;
      record(status, usage, stream ? firstTokenMs : null);
    } finally {
      clearTimeout(timer);
      this.upstreams.delete(abort);
    }
  }
}

/** Connections to providers, kept open between calls (idle ones do not hold the process). */
const HTTP_AGENT = new http.Agent({ keepAlive: true });
const HTTPS_AGENT = new https.Agent({ keepAlive: true });

/** POSTs the body upstream; answers once the provider's status and headers are in, its body to be read as it comes. */
function post(target: string, headers: Record<string, string>, body: Buffer, signal: AbortSignal): Promise<http.IncomingMessage> {
  const url = new URL(target);
  const secure = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', headers: { ...headers, 'content-length': String(body.length) }, agent: secure ? HTTPS_AGENT : HTTP_AGENT, signal };
    const request = (secure ? https : http).request(url, options, resolve);
    request.on('error', reject);
    request.end(body);
  });
}

/** The gateway of this process, started on first use: the server's trials and the CLI's local mode share it. */
let shared: Promise<ModelGateway> | null = null;

export function sharedModelGateway(): Promise<ModelGateway> {
  shared ??= ModelGateway.start().catch((error: unknown) => {
    shared = null;
    throw error;
  });
  return shared;
}

function answerError(response: http.ServerResponse, protocol: WireProtocol, status: number, message: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(errorBody(protocol, status, message)));
}

async function readBody(request: http.IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) {
      request.resume();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseJson(raw: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(raw.toString('utf8'));
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A call's outcome as the metrics label it: ok, or the kind of failure. */
function callOutcome(status: number): string {
  if (status < 400) return 'ok';
  if (status === 401 || status === 403) return 'refused';
  if (status === 429) return 'rate-limit';
  if (status === 502) return 'unreachable';
  return status >= 500 ? 'server-error' : 'client-error';
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : 'aborted';
}

/** What a failed fetch says, down to its cause (ECONNREFUSED, a timeout…). */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
