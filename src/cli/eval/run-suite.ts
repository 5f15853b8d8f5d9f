import { ApiRefusal, AssayApi, ServerUnreachable } from './api-client';
import type { BatchView } from './batch-view';
import { EXIT, FailOn, gateExit, worstExit } from './exit-codes';
import { followBatch } from './follow';
import { barsDisplay, plainDisplay, ProgressDisplay } from './progress';
import { SlotBell, startWhenSlotFree, WaitedTooLong } from './slot-wait';
import { StartContext, StartedBatch, startBatch, StartRefused } from './start-batch';
import { summaryLines } from './suite-report';
import { SuiteView } from './suite-view';

type Json = Record<string, unknown>;

export interface RunChoices {
  failOn: FailOn;
  bars: boolean;
  concurrency: number;
  /** How often a local runner beats (default 60 s; ASSAY_RUNNER_BEAT_MS, for tests and diagnostics). */
  beatIntervalMs?: number;
  /** How long a batch waits for one of the organization's slots (--wait-timeout). */
  waitTimeoutMs: number;
}

/** Where the command writes: lines for the reader (stdout) and for problems (stderr). */
export interface Output {
  line(text: string): void;
  error(text: string): void;
  stream: NodeJS.WriteStream;
}

/** A suite as the batches that run it. */
export interface SuiteRun {
  name: string;
  shownAs: string;
  parts: Json[];
  local: boolean;
  env: string[];
  /** The trials of each run, for pass@k. */
  k: number;
  /** The first lines, before any batch starts (what the suite will run). */
  intro: string[];
  /** A problem the server found at a path of a part's body, as the suite file names it. */
  problemAt(part: number, at: Array<string | number>, message: string): string;
  /** Under --retry-void: the batch whose void trials these run again, and the merge of both. */
  retry?: { batchId: string; original: BatchView; merge: (batches: BatchView[]) => BatchView };
  /** How a part starts, when not as a body of evals.batches.start (stored cases run again). */
  start?: (part: number, context: StartContext) => Promise<StartedBatch>;
}

export interface SuiteOutcome {
  exit: number;
  /** The batches as their last `evals.batches.get` answered (none when none was started or read). */
  batches: BatchView[];
  /** What the summary showed: all the batches as one (merged under --retry-void); null when none ran to its end. */
  view: BatchView | null;
}

/** How a followed batch ended for the command. */
type Followed = { state: 'ended' } | { state: 'interrupted'; batchId: string } | { state: 'cancelled'; batchId: string } | { state: 'lost'; message: string };

/** How long the CLI waits, after Ctrl-C, for a cancelled local batch to read as ended. */
const CANCELLED_READ_MS = 15_000;

/**
 * Runs a suite's batches: starts each as a slot of the organization frees (a local suite's one
 * after another, so --concurrency bounds this machine's trials), follows them together in one
 * progress view, and ends with one summary over all of them and the gate's exit code.
 */
export async function runSuite(run: SuiteRun, api: AssayApi, choices: RunChoices, out: Output, signal: AbortSignal): Promise<SuiteOutcome> {
  for (const line of run.intro) out.line(line);
  const view = new SuiteView(run.parts, run.k);
  const bell = new SlotBell();
  const screen = new Screen(choices.bars ? barsDisplay(out.stream, Date.now()) : plainDisplay((line) => out.line(line), Date.now()), out);
  const followed: Array<Promise<Followed>> = [];
  let stopped: number | null = null;
  let localRunner: Promise<unknown> = Promise.resolve();
  for (let part = 0; part < run.parts.length && stopped === null && !signal.aborted; part += 1) {
    await localRunner;
    const context = startContext(run, part, api, choices, screen, signal);
    const label = run.parts.length > 1 ? ` ${part + 1}/${run.parts.length}` : '';
    try {
      const started = await startWhenSlotFree(() => (run.start ? run.start(part, context) : startBatch(run.parts[part], context)), {
        timeoutMs: choices.waitTimeoutMs,
        signal,
        bell,
        onWait: () => screen.say(waitingLine(run.name, label, choices.waitTimeoutMs)),
      });
      if (started === null) break;
      const notes = [...(run.local ? ['local'] : []), ...(run.parts.length > 1 ? [`${part + 1}/${run.parts.length}`] : [])];
      screen.say(`${run.name}: batch ${started.batchId}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`);
      screen.say(`  ${api.url}/#/batches/${started.batchId}`);
      const following = follow(api, started, part, { view, screen, out, local: run.local, signal }).finally(() => bell.ring());
      followed.push(following);
      if (started.done) localRunner = following;
    } catch (error) {
      stopped = notStarted(error, run, part, choices.waitTimeoutMs, out);
    }
  }
  const ends = await Promise.all(followed);
  screen.stop();
  return conclude(run, view, ends, stopped, api, choices, out);
}

function startContext(run: SuiteRun, part: number, api: AssayApi, choices: RunChoices, screen: Screen, signal: AbortSignal): StartContext {
  return {
    api,
    shownAs: run.shownAs,
    problemAt: (at, message) => run.problemAt(part, at, message),
    local: run.local,
    env: run.env,
    concurrency: choices.concurrency,
    beatIntervalMs: choices.beatIntervalMs,
    log: (line) => screen.error(line),
    signal,
  };
}

function waitingLine(name: string, label: string, timeoutMs: number): string {
  return `${name}: batch${label} waits for a slot: this organization runs as many batches as it may at once (3); waiting up to ${duration(timeoutMs)}`;
}

/** Why the next batch did not start, said once; the exit code it deserves. */
function notStarted(error: unknown, run: SuiteRun, part: number, timeoutMs: number, out: Output): number {
  const left = run.parts.slice(part).flatMap((body) => (body.cases as Array<{ id: string }>).map((evalCase) => evalCase.id));
  const which = run.parts.length > 1 ? ` ${part + 1}/${run.parts.length}` : '';
  const cases = `its cases did not run (${left.slice(0, 10).join(', ')}${left.length > 10 ? ` and ${left.length - 10} more` : ''})`;
  if (error instanceof WaitedTooLong) {
    out.error(
      `${run.shownAs}: batch${which} could not start: no slot came free within --wait-timeout ${duration(timeoutMs)} (${error.message}); ${cases}. Run it again later, or give a longer --wait-timeout.`,
    );
    return EXIT.failed;
  }
  if (!(error instanceof StartRefused)) throw error;
  out.error(error.message);
  if (part > 0) out.error(`${run.shownAs}: batch${which} and those after it did not start; ${cases}.`);
  return error.exit;
}

export function duration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}

interface FollowContext {
  view: SuiteView;
  screen: Screen;
  out: Output;
  local: boolean;
  signal: AbortSignal;
}

/** Follows one batch of the suite to its end, showing the suite's progress on each read. */
async function follow(api: AssayApi, started: StartedBatch, part: number, context: FollowContext): Promise<Followed> {
  const { view, screen, signal } = context;
  const { batchId } = started;
  let batch: BatchView | null = null;
  let lost: string | null = null;
  try {
    batch = await followBatch(api, batchId, (update) => screen.update(part, update, view), signal);
  } catch (error) {
    if (!(error instanceof ServerUnreachable || error instanceof ApiRefusal)) throw error;
    lost = `Lost the batch ${batchId}: ${error.message}`;
  }
  // A local batch ends when its runner has reported every trial and finished it (cancelled on Ctrl-C).
  if (started.done) await localRunnerEnded(started.done, batchId, context.out);
  if (lost !== null) return { state: 'lost', message: lost };
  if (batch) return { state: 'ended' };
  if (!context.local) return { state: 'interrupted', batchId };
  // The runner finished the batch as cancelled: show what its finished trials measured.
  const cancelled = await followBatch(api, batchId, () => undefined, AbortSignal.timeout(CANCELLED_READ_MS)).catch(() => null);
  if (cancelled) view.update(part, cancelled);
  return { state: 'cancelled', batchId };
}

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

function conclude(run: SuiteRun, view: SuiteView, ends: Followed[], stopped: number | null, api: AssayApi, choices: RunChoices, out: Output): SuiteOutcome {
  const lost = ends.flatMap((end) => (end.state === 'lost' ? [end.message] : []));
  for (const message of lost) out.error(message);
  const interrupted = ends.flatMap((end) => (end.state === 'interrupted' ? [end.batchId] : []));
  const cancelled = ends.flatMap((end) => (end.state === 'cancelled' ? [end.batchId] : []));
  for (const batchId of cancelled)
    out.error(`Interrupted: batch ${batchId} was finished as cancelled; its finished trials were reported, the others are void.`);
  if (interrupted.length > 0) {
    const batches = interrupted.map((batchId) => `batch ${batchId}`).join(', ');
    out.error(
      `Interrupted: stopped following ${batches}. ${interrupted.length === 1 ? 'It goes' : 'They go'} on on the server: ${api.url}/#/batches/${interrupted[0]}`,
    );
    return { exit: EXIT.interrupted, batches: [], view: null };
  }
  const batches = view.batches();
  if (lost.length > 0) return { exit: EXIT.usage, batches, view: null };
  const nothingToRetry = run.retry !== undefined && run.parts.length === 0;
  if (batches.length === 0 && !nothingToRetry && stopped === null && cancelled.length === 0) out.error('Interrupted: no batch was started.');
  if (batches.length === 0 && !nothingToRetry) return { exit: cancelled.length > 0 ? EXIT.interrupted : (stopped ?? EXIT.interrupted), batches, view: null };
  const summary = run.retry ? run.retry.merge(batches) : view.asOne();
  const lines = summaryLines({ name: run.name, batches, view: summary, retryOf: run.retry?.batchId ?? null, url: api.url, failOn: choices.failOn, k: run.k });
  for (const line of lines) out.line(line);
  if (cancelled.length > 0) return { exit: EXIT.interrupted, batches, view: summary };
  const gate = gateExit(summary, choices.failOn);
  return { exit: stopped === null ? gate : worstExit([gate, stopped]), batches, view: summary };
}

/**
 * The progress view of a suite: lines said before the first progress is drawn go straight
 * out; after it, through the display, so bars are not broken.
 */
class Screen {
  private drawing = false;

  constructor(
    private readonly display: ProgressDisplay,
    private readonly out: Output,
  ) {}

  say(line: string): void {
    if (this.drawing) this.display.log(line);
    else this.out.line(line);
  }

  error(line: string): void {
    this.out.error(line);
  }

  update(part: number, batch: BatchView, view: SuiteView): void {
    view.update(part, batch);
    this.drawing = true;
    this.display.update(view.withPending());
  }

  stop(): void {
    this.display.stop();
  }
}
