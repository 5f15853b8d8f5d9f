import { randomUUID } from 'node:crypto';

/** How the local runner reaches the server: one POST /v1/<operation> per call. */
export interface RunnerApi {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the interface the CLI implements: any HTTP client's parsed JSON fits it
  call(operation: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
}

/** The server refused a call (4xx): retrying the same request would be refused again. */
export class RunnerRefusal extends Error {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly detail: string,
    /** The answer's body as the server gave it (its error shape: `_tag`, `message`, `issues`). */
    readonly body: unknown = null,
  ) {
    super(`${operation} was refused (${status}): ${detail}`);
    this.name = 'RunnerRefusal';
  }
}

/** Every attempt failed with a 5xx or a network error; `reached` is false when no attempt got an answer. */
export class RunnerUnavailable extends Error {
  constructor(
    readonly operation: string,
    message: string,
    readonly reached: boolean,
  ) {
    super(message);
    this.name = 'RunnerUnavailable';
  }
}

const ATTEMPTS = 4;
const FIRST_BACKOFF_MS = 500;

/**
 * Calls the API, retrying what may pass on a second try: a 5xx or a network error, up to four
 * attempts with a doubling pause. A 4xx is a RunnerRefusal at once; the last transient error
 * becomes a RunnerUnavailable that names the operation and what went wrong.
 */
export async function callRunner(
  api: RunnerApi,
  operation: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ body: unknown; attempt: number }> {
  let last = '';
  let reached = false;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    try {
      const answer: { status: number; body: unknown } = await api.call(operation, body, headers);
      if (answer.status >= 200 && answer.status < 300) return { body: answer.body, attempt };
      if (answer.status < 500) throw new RunnerRefusal(operation, answer.status, messageOf(answer.body), answer.body);
      reached = true;
      last = `the server answered ${answer.status}: ${messageOf(answer.body)}`;
    } catch (error) {
      if (error instanceof RunnerRefusal) throw error;
      last = `the server could not be reached: ${(error as Error).message}`;
    }
    if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, FIRST_BACKOFF_MS * 2 ** (attempt - 1)));
  }
  throw new RunnerUnavailable(operation, `${operation} failed after ${ATTEMPTS} attempts; ${last}`, reached);
}

function messageOf(body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
  return body === undefined ? 'no body' : JSON.stringify(body);
}

/** The start's idempotency key: a retried start finds the batch the first attempt began. */
export function withIdempotencyKey(headers: Record<string, string>): Record<string, string> {
  const given = Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key');
  return given ? headers : { ...headers, 'idempotency-key': `assay-local-${randomUUID()}` };
}
