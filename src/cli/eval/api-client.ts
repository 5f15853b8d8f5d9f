/** What one call answered: the HTTP status and the parsed JSON body (the text when it is not JSON). */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** The server did not answer at all: nothing the suite or the key can change. */
export class ServerUnreachable extends Error {}

/** A call the server answered with an error, in the spec's error shape. */
export class ApiRefusal extends Error {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    const error = body as { _tag?: string; message?: string } | null;
    super(`${operation} answered ${status}${error?._tag ? ` ${error._tag}` : ''}: ${error?.message ?? JSON.stringify(body)}`);
  }
}

const CALL_TIMEOUT_MS = 120_000;

/**
 * The HTTP API as the CLI calls it: `POST <url>/v1/<operation>` with the bearer key. It is also
 * the `RunnerApi` the local runner reports through (src/cli/local/local-runner.ts).
 */
export class AssayApi {
  constructor(
    readonly url: string,
    private readonly key: string | undefined,
  ) {}

  async call(operation: string, body: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> {
    const request: Record<string, string> = { 'content-type': 'application/json', ...headers };
    if (this.key) request.authorization = `Bearer ${this.key}`;
    let response: Response;
    try {
      response = await fetch(`${this.url}/v1/${operation}`, {
        method: 'POST',
        headers: request,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (error) {
      throw new ServerUnreachable(
        `Cannot reach the Assay server at ${this.url} (${reason(error)}). Start one (npx assay serve) or point --url or ASSAY_URL at yours.`,
      );
    }
    const text = await response.text();
    return { status: response.status, body: parse(text) };
  }

  /**
   * Opens `GET <url>/v1/<operation>?…` as Server-Sent Events; null when the server does not
   * answer with a stream (an older server without the route, a refusal, no connection).
   */
  async openStream(operation: string, query: Record<string, string>, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | null> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    try {
      const response = await fetch(`${this.url}/v1/${operation}?${new URLSearchParams(query).toString()}`, { headers, signal });
      if (response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream') === true && response.body !== null) {
        return response.body;
      }
      await response.body?.cancel();
      return null;
    } catch {
      return null;
    }
  }

  /** The answer's body when the call succeeded; an ApiRefusal otherwise. */
  async expect(operation: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    const answer = await this.call(operation, body, headers);
    if (answer.status !== 200) throw new ApiRefusal(operation, answer.status, answer.body);
    return answer.body;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** fetch's own message ("fetch failed") hides the useful part in its cause. */
function reason(error: unknown): string {
  const cause = (error as { cause?: { message?: string; code?: string } }).cause;
  return cause?.message ?? cause?.code ?? (error as Error).message;
}
