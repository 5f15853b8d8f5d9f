import { ApiRefusal, AssayApi, ServerUnreachable } from './api-client';
import type { BatchView } from './batch-view';
import { EXIT, FailOn, gateExit } from './exit-codes';
import { followBatch } from './follow';
import { localEnvironment, RunnerRefusal, RunnerUnavailable, startLocalBatch } from './local-mode';
import type { PreparedSuite } from './prepare-suite';
import { barsDisplay, plainDisplay, ProgressDisplay } from './progress';
import { failingCases, summaryTable } from './summary';
import { triggerHeaders } from './trigger';

export interface RunChoices {
  failOn: FailOn;
  bars: boolean;
  concurrency: number;
  /** How often a local runner beats (default 60 s; ASSAY_RUNNER_BEAT_MS, for tests and diagnostics). */
  beatIntervalMs?: number;
}

/** Where the command writes: lines for the reader (stdout) and for problems (stderr). */
export interface Output {
  line(text: string): void;
  error(text: string): void;
  stream: NodeJS.WriteStream;
}

export interface SuiteOutcome {
  exit: number;
  /** The batch as the last `evals.batches.get` answered it; null when none was started or read. */
  batch: BatchView | null;
}

/** A start the server refused, as the exit code and message it deserves. */
class StartRefused extends Error {
  constructor(
    readonly exit: number,
    message: string,
  ) {
    super(message);
  }
}

/** Starts one suite's batch (on the server, or here for a local suite), follows it, prints its summary. */
export async function runSuite(suite: PreparedSuite, api: AssayApi, choices: RunChoices, out: Output, signal: AbortSignal): Promise<SuiteOutcome> {
  let started: { batchId: string; done: Promise<{ cancelled: boolean }> | null };
  try {
    started = suite.local ? await startHere(suite, api, choices, out, signal) : await startOnServer(suite, api);
  } catch (error) {
    if (error instanceof StartRefused) out.error(error.message);
    else if (error instanceof ServerUnreachable) out.error(error.message);
    else throw error;
    return { exit: error instanceof StartRefused ? error.exit : EXIT.usage, batch: null };
  }
  const { batchId } = started;
  out.line(`${suite.name}: batch ${batchId}${suite.local ? ' (local)' : ''}`);
  out.line(`  ${api.url}/#/batches/${batchId}`);
  const display: ProgressDisplay = choices.bars ? barsDisplay(out.stream, Date.now()) : plainDisplay((line) => out.line(line), Date.now());
  let batch: BatchView | null;
  try {
    batch = await followBatch(api, batchId, (update) => display.update(update), signal);
  } catch (error) {
    display.stop();
    if (!(error instanceof ServerUnreachable || error instanceof ApiRefusal)) throw error;
    out.error(`Lost the batch ${batchId}: ${error.message}`);
    if (started.done) await localRunnerEnded(started.done, batchId, out);
    return { exit: EXIT.usage, batch: null };
  } finally {
    display.stop();
  }
  // A local batch ends when its runner has reported every trial and finished it (cancelled on Ctrl-C).
  if (started.done) await localRunnerEnded(started.done, batchId, out);
  if (!batch && suite.local) {
    // The runner finished the batch as cancelled: show what its finished trials measured.
    const cancelled = await followBatch(api, batchId, () => undefined, AbortSignal.timeout(CANCELLED_READ_MS)).catch(() => null);
    out.error(`Interrupted: batch ${batchId} was finished as cancelled; its finished trials were reported, the others are void.`);
    if (cancelled) printSummary(suite, cancelled, api.url, choices.failOn, out);
    return { exit: EXIT.interrupted, batch: cancelled };
  }
  if (!batch) {
    out.error(`Interrupted: stopped following batch ${batchId}. It goes on on the server: ${api.url}/#/batches/${batchId}`);
    return { exit: EXIT.interrupted, batch: null };
  }
  printSummary(suite, batch, api.url, choices.failOn, out);
  return { exit: gateExit(batch, choices.failOn), batch };
}

/** How long the CLI waits, after Ctrl-C, for a cancelled local batch to read as ended. */
const CANCELLED_READ_MS = 15_000;

/**
 * Waits for the local runner; one that stopped on an error (the server gave up on the batch, or
 * could not be reached) says why. The batch's own status, read from the server, decides the exit.
 */
async function localRunnerEnded(done: Promise<{ cancelled: boolean }>, batchId: string, out: Output): Promise<void> {
  try {
    await done;
  } catch (error) {
    out.error(`The local runner of batch ${batchId} stopped: ${(error as Error).message}`);
  }
}

async function startOnServer(suite: PreparedSuite, api: AssayApi): Promise<{ batchId: string; done: null }> {
  const answer = await api.call('evals.batches.start', suite.body, triggerHeaders(process.env));
  if (answer.status === 200) return { batchId: (answer.body as { id: string }).id, done: null };
  throw refusal(suite, new ApiRefusal('evals.batches.start', answer.status, answer.body));
}

async function startHere(
  suite: PreparedSuite,
  api: AssayApi,
  choices: RunChoices,
  out: Output,
  signal: AbortSignal,
): Promise<{ batchId: string; done: Promise<{ cancelled: boolean }> }> {
  const { values, missing } = localEnvironment(suite.env, process.env);
  if (missing.length > 0) {
    throw new StartRefused(
      EXIT.usage,
      `${suite.file.shownAs}: env names ${missing.join(', ')}, which this environment does not set; set them or remove them from env.`,
    );
  }
  try {
    const local = await startLocalBatch({
      api,
      body: suite.body,
      headers: triggerHeaders(process.env),
      concurrency: choices.concurrency,
      env: values,
      signal,
      beatIntervalMs: choices.beatIntervalMs,
      log: (line) => out.error(line),
    });
    return { batchId: local.batchId, done: local.done };
  } catch (error) {
    // The runner library speaks of its calls in its own terms; the CLI answers them as it answers evals.batches.start.
    if (error instanceof RunnerRefusal) throw refusal(suite, new ApiRefusal(error.operation, error.status, error.body));
    if (error instanceof RunnerUnavailable && !error.reached) throw new ServerUnreachable(error.message);
    if (error instanceof RunnerUnavailable) throw new StartRefused(EXIT.failed, `${suite.file.shownAs}: the batch could not start: ${error.message}`);
    throw error;
  }
}

/**
 * What the user must fix (the body, the key) is 2, like an invalid file; a server that will not
 * run the batch now (three already running) is 1, the batch could not run.
 */
function refusal(suite: PreparedSuite, error: ApiRefusal): StartRefused {
  const issues = (error.body as { issues?: Array<{ path: Array<string | number>; message: string }> } | null)?.issues;
  if (error.status === 400 && issues) return new StartRefused(EXIT.usage, issues.map((issue) => suite.file.problem(issue.path, issue.message)).join('\n'));
  const message = (error.body as { message?: string } | null)?.message ?? error.message;
  if (error.status === 400) return new StartRefused(EXIT.usage, `${suite.file.shownAs}: the server refused the suite: ${message}`);
  if (error.status === 401) return new StartRefused(EXIT.usage, `The server refused the API key: ${message} Pass a valid key with --key or ASSAY_API_KEY.`);
  if (error.status === 403) return new StartRefused(EXIT.usage, `${message} Use a key with evals:write and evals:read.`);
  return new StartRefused(EXIT.failed, `${suite.file.shownAs}: the batch could not start: ${error.message}`);
}

function printSummary(suite: PreparedSuite, batch: BatchView, url: string, failOn: FailOn, out: Output): void {
  out.line('');
  out.line(`${suite.name}: batch ${batch.id} ${batch.status}${batch.failure ? `: ${batch.failure}` : ''}`);
  out.line(summaryTable(batch, suite.trials));
  const failing = failingCases(batch, url, failOn === 'strict');
  if (failing) {
    out.line('');
    out.line('Failing cases:');
    out.line(failing);
  }
}
