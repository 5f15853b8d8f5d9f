import { ApiRefusal, AssayApi, ServerUnreachable } from './api-client';
import { EXIT } from './exit-codes';
import { localEnvironment, RunnerRefusal, RunnerUnavailable, startLocalBatch } from './local-mode';
import { triggerHeaders } from './trigger';

type Json = Record<string, unknown>;

/** A batch that started: its id, and for a local batch the runner's end. */
export interface StartedBatch {
  batchId: string;
  done: Promise<{ cancelled: boolean }> | null;
}

/** What a start needs besides its body. */
export interface StartContext {
  api: AssayApi;
  shownAs: string;
  /** A problem the server found at a path of this batch's body, as the suite file's line names it. */
  problemAt: (at: Array<string | number>, message: string) => string;
  local: boolean;
  env: string[];
  concurrency: number;
  beatIntervalMs?: number;
  log: (line: string) => void;
  signal: AbortSignal;
}

/** A start the server refused, as the exit code and message it deserves. */
export class StartRefused extends Error {
  constructor(
    readonly exit: number,
    message: string,
  ) {
    super(message);
  }
}

/** The organization runs as many batches as it may (409): this one may start once one ends. */
export class SlotsTaken extends Error {}

/** Starts one batch of a suite: on the server, or here for a local suite. */
export async function startBatch(body: Json, context: StartContext): Promise<StartedBatch> {
  try {
    return context.local ? await startHere(body, context) : await startOnServer(body, context);
  } catch (error) {
    if (error instanceof ServerUnreachable) throw new StartRefused(EXIT.usage, error.message);
    throw error;
  }
}

async function startOnServer(body: Json, context: StartContext): Promise<StartedBatch> {
  const answer = await context.api.call('evals.batches.start', body, triggerHeaders(process.env));
  if (answer.status === 200) return { batchId: (answer.body as { id: string }).id, done: null };
  throw refusal(context, new ApiRefusal('evals.batches.start', answer.status, answer.body));
}

/** Runs a stored case again (evals.cases.run), refused as a start is. */
export async function runStoredCase(request: Json, context: StartContext): Promise<StartedBatch> {
  try {
    const answer = await context.api.call('evals.cases.run', request, triggerHeaders(process.env));
    if (answer.status === 200) return { batchId: (answer.body as { id: string }).id, done: null };
    throw refusal(context, new ApiRefusal('evals.cases.run', answer.status, answer.body));
  } catch (error) {
    if (error instanceof ServerUnreachable) throw new StartRefused(EXIT.usage, error.message);
    throw error;
  }
}

async function startHere(body: Json, context: StartContext): Promise<StartedBatch> {
  const { values, missing } = localEnvironment(context.env, process.env);
  if (missing.length > 0) {
    throw new StartRefused(
      EXIT.usage,
      `${context.shownAs}: env names ${missing.join(', ')}, which this environment does not set; set them or remove them from env.`,
    );
  }
  try {
    const local = await startLocalBatch({
      api: context.api,
      body,
      headers: triggerHeaders(process.env),
      concurrency: context.concurrency,
      env: values,
      signal: context.signal,
      beatIntervalMs: context.beatIntervalMs,
      log: context.log,
    });
    return { batchId: local.batchId, done: local.done };
  } catch (error) {
    // The runner library speaks of its calls in its own terms; the CLI answers them as it answers evals.batches.start.
    if (error instanceof RunnerRefusal) throw refusal(context, new ApiRefusal(error.operation, error.status, error.body));
    if (error instanceof RunnerUnavailable && !error.reached) throw new ServerUnreachable(error.message);
    if (error instanceof RunnerUnavailable) throw new StartRefused(EXIT.failed, `${context.shownAs}: the batch could not start: ${error.message}`);
    throw error;
  }
}

/**
 * What the user must fix (the body, the key) is 2, like an invalid file; a full organization
 * (409) is SlotsTaken, to wait for; a server that will not run the batch otherwise is 1.
 */
function refusal(context: StartContext, error: ApiRefusal): Error {
  const { shownAs } = context;
  const issues = (error.body as { issues?: Array<{ path: Array<string | number>; message: string }> } | null)?.issues;
  const message = (error.body as { message?: string } | null)?.message ?? error.message;
  if (error.status === 400 && issues) {
    return new StartRefused(EXIT.usage, issues.map((issue) => context.problemAt(issue.path, issue.message)).join('\n'));
  }
  if (error.status === 400) return new StartRefused(EXIT.usage, `${shownAs}: the server refused the suite: ${message}`);
  if (error.status === 401) return new StartRefused(EXIT.usage, `The server refused the API key: ${message} Pass a valid key with --key or ASSAY_API_KEY.`);
  if (error.status === 403) return new StartRefused(EXIT.usage, `${message} Use a key with evals:write and evals:read.`);
  if (error.status === 409) return new SlotsTaken(message);
  return new StartRefused(EXIT.failed, `${shownAs}: the batch could not start: ${error.message}`);
}
