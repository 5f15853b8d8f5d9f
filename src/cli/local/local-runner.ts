import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { createTrialRunner, ExecutionConfig, loadExecutionConfig, TrialOutcome, TrialRunner, TrialSpec, voidOutcome } from '#trial-runner';
import { callRunner, RunnerApi, RunnerRefusal, withIdempotencyKey } from './runner-calls';
import { reportedResult } from './trial-report';

export type { RunnerApi } from './runner-calls';
export { RunnerRefusal } from './runner-calls';

export interface LocalBatchOptions {
  api: RunnerApi;
  /** The body of evals.batches.start; sent with checksIn: true. */
  body: unknown;
  headers: Record<string, string>;
  concurrency: number;
  /** The user's own values, by the names the suite lists: given to trials, redacted from what they report, never sent otherwise. */
  env: Record<string, string>;
  signal: AbortSignal;
  /** Default 60000. */
  beatIntervalMs?: number;
  log?: (line: string) => void;
  /** Where the runner keeps artifacts and caches; default a temporary directory removed at the end. */
  dataDir?: string;
  /** Default: ASSAY_CONFIG of this machine when set, else the runner's defaults. */
  config?: ExecutionConfig;
}

export interface StartedLocalBatch {
  batchId: string;
  runs: Array<{ caseId: string; id: string; variantId: string }>;
  /** Settles once the batch is finished on the server (cancelled: stopped by the signal). */
  done: Promise<{ cancelled: boolean }>;
}

interface LeasedTrial {
  id: string;
  caseId: string;
  ordinal: number;
  lease: { id: string; expiresAt: string };
  spec: TrialSpec;
}

const IDLE_POLL_MS = 250;

/**
 * Local mode: starts the batch through runner.batches.start, then leases the trials of its
 * `local` variants, runs each in the same trial runner the server uses, reports each result,
 * beats while it works, and finishes the batch when nothing is left (or, on `signal`, aborts
 * the running trials and finishes it as cancelled).
 */
export async function startLocalBatch(options: LocalBatchOptions): Promise<StartedLocalBatch> {
  const body = { ...(options.body as Record<string, unknown>), checksIn: true };
  const { body: started } = await callRunner(options.api, 'runner.batches.start', body, withIdempotencyKey(options.headers));
  const batch = started as { id: string; runs: StartedLocalBatch['runs'] };
  const done = new LocalBatch(options, batch.id).run();
  // The caller may attach its handler later; a rejection is theirs to read, not an unhandled one.
  done.catch(() => undefined);
  return { batchId: batch.id, runs: batch.runs, done };
}

class LocalBatch {
  private readonly active = new Map<string, Promise<void>>();
  private readonly trialsAbort = new AbortController();
  private readonly log: (line: string) => void;
  private runner: TrialRunner | null = null;
  private readonly temporary: string[] = [];
  private fatal: Error | null = null;
  private executionConfig: ExecutionConfig | null = null;

  constructor(
    private readonly options: LocalBatchOptions,
    private readonly batchId: string,
  ) {
    this.log = options.log ?? (() => undefined);
    // Every command of every running trial listens on this one signal (and stops listening when it ends): many at once is no leak.
    setMaxListeners(0, this.trialsAbort.signal);
  }

  async run(): Promise<{ cancelled: boolean }> {
    const { signal } = this.options;
    const stopTrials = () => this.trialsAbort.abort();
    signal.addEventListener('abort', stopTrials, { once: true });
    const beat = setInterval(() => void this.beat(), this.options.beatIntervalMs ?? 60_000);
    try {
      await this.leaseAndRun();
      await Promise.allSettled(this.active.values());
      // Nothing is left to keep alive; a beat racing the batch's end would only be refused.
      clearInterval(beat);
      if (this.fatal) throw this.fatal;
      const cancelled = signal.aborted;
      await callRunner(this.options.api, 'runner.batches.finish', { id: this.batchId, cancelled }, this.options.headers);
      this.log(cancelled ? `batch ${this.batchId} cancelled: the unreported trials are void` : `batch ${this.batchId}: every trial reported`);
      return { cancelled };
    } finally {
      clearInterval(beat);
      signal.removeEventListener('abort', stopTrials);
      for (const dir of this.temporary) fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Leases while places are free and trials remain; waits for a running trial otherwise. */
  private async leaseAndRun(): Promise<void> {
    const { concurrency, signal } = this.options;
    let remaining = Number.POSITIVE_INFINITY;
    const stopped = aborted(signal);
    while (!signal.aborted && this.fatal === null) {
      if (this.active.size < concurrency && remaining > 0) {
        const { body } = await callRunner(
          this.options.api,
          'runner.trials.lease',
          { id: this.batchId, max: concurrency - this.active.size },
          this.options.headers,
        );
        const leased = body as { trials: LeasedTrial[]; remaining: number; outputCapBytes: number };
        remaining = leased.remaining;
        for (const trial of leased.trials) this.start(trial, leased.outputCapBytes);
        if (leased.trials.length > 0) continue;
      }
      if (this.active.size === 0 && remaining === 0) return;
      await Promise.race([...this.active.values(), sleep(IDLE_POLL_MS), stopped]);
    }
  }

  private start(trial: LeasedTrial, outputCapBytes: number): void {
    this.log(`trial ${trial.id} (case ${trial.caseId}, #${trial.ordinal}) started`);
    const running = this.runTrial(trial, outputCapBytes)
      .catch((error: unknown) => {
        this.fatal ??= error as Error;
        this.trialsAbort.abort();
      })
      .finally(() => this.active.delete(trial.id));
    this.active.set(trial.id, running);
  }

  private async runTrial(trial: LeasedTrial, outputCapBytes: number): Promise<void> {
    const spec = this.localSpec(trial.spec);
    const outcome = await this.trialRunner(outputCapBytes)
      .run(spec, this.trialsAbort.signal)
      .catch((error: unknown): TrialOutcome =>
        voidOutcome({ failure: `the local runner failed: ${(error as Error).message}`.split('\n')[0].slice(0, 240), voidFields: [], serviceFault: true }),
      );
    // A stopped trial is not reported: the cancelled finish voids it.
    if (this.trialsAbort.signal.aborted) return;
    const report = { id: this.batchId, trialId: trial.id, lease: trial.lease.id, result: reportedResult(outcome) };
    try {
      await callRunner(this.options.api, 'runner.trials.report', report, this.options.headers);
      this.log(`trial ${trial.id} (case ${trial.caseId}, #${trial.ordinal}) ${outcome.status}${outcome.failure ? `: ${outcome.failure}` : ''}`);
    } catch (error) {
      // A refused report (an expired lease, a finished batch) loses this trial only; the batch goes on.
      if (!(error instanceof RunnerRefusal)) throw error;
      this.log(`trial ${trial.id}: its report was refused: ${error.detail}`);
      if (error.detail.includes('stopped checking in')) throw error;
    }
  }

  /** The user's values join the trial's env and its secrets; `local` runs in this machine's default sandbox. */
  private localSpec(spec: TrialSpec): TrialSpec {
    const config = this.config();
    const sandbox = spec.sandbox === 'local' && !Object.hasOwn(config.sandboxes, 'local') ? null : spec.sandbox;
    const secrets = Object.values(this.options.env).filter((value) => value !== '');
    return { ...spec, sandbox, env: { ...spec.env, ...this.options.env }, secrets: [...spec.secrets, ...secrets] };
  }

  private trialRunner(outputCapBytes: number): TrialRunner {
    if (this.runner) return this.runner;
    const dataDir = this.options.dataDir ?? this.temporaryDir('assay-local-data-');
    const trialsRoot = this.temporaryDir('assay-local-trials-');
    // Agents are kept across local runs (installing one takes up to minutes): the user's cache, unless ASSAY_AGENTS_DIR says.
    const agentsDir =
      process.env.ASSAY_AGENTS_DIR?.trim() || path.join(process.env.XDG_CACHE_HOME?.trim() || path.join(homedir(), '.cache'), 'assay', 'agents');
    this.runner = createTrialRunner({ dataDir, trialsRoot, config: this.config(), outputCapBytes, agentsDir, runsOn: 'local' });
    return this.runner;
  }

  /** The user's own machine: their repositories (paths, file://) may be cloned unless their ASSAY_CONFIG says otherwise. */
  private config(): ExecutionConfig {
    const file = process.env.ASSAY_CONFIG ? path.resolve(process.env.ASSAY_CONFIG) : null;
    this.executionConfig ??= this.options.config ?? loadExecutionConfig(file, { allowLocal: true });
    return this.executionConfig;
  }

  private temporaryDir(prefix: string): string {
    const dir = fs.mkdtempSync(path.join(tmpdir(), prefix));
    this.temporary.push(dir);
    return dir;
  }

  private async beat(): Promise<void> {
    try {
      await callRunner(this.options.api, 'runner.beat', { id: this.batchId }, this.options.headers);
    } catch (error) {
      // A batch the server gave up on takes no more work: stop, and say why.
      if (error instanceof RunnerRefusal && error.detail.includes('stopped checking in')) {
        this.fatal ??= new Error(`batch ${this.batchId} is over on the server: ${error.detail}`);
        this.trialsAbort.abort();
        return;
      }
      this.log(`beat failed (will retry at the next beat): ${(error as Error).message}`);
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
