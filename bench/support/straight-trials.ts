import { BlobBackedEventStore } from '#infrastructure/blob-store/blob-backed-event-store';
import { FileBlobStore } from '#infrastructure/blob-store/file/file-blob-store';
import type { EventStore, ExpectedRevision } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { createTrialRunner, parseExecutionConfig, SandboxDriverName, TrialRunner, TrialSpec } from '#trial-runner';
import { trialResultEvents } from '#modules/evals/trials/trial-decisions';
import { claimEvent } from '#modules/evals/orchestration/trial-lease';
import { TrialEvent, TrialRef, trialStream } from '#modules/evals/trials/trial.events';
import type { EventMetadata } from '#shared/domain-event';
import { newEventId, newId } from '#shared/ids';
import { CpuSplit, cpuSplit } from './child-server';
import { tempDir } from './sqlite-log';
import { AT_ONCE, TRIALS, Workload } from './workloads';

/**
 * A trial's own machinery with nothing of the service around it: Assay's trial runner (the trial's
 * directory, its sandbox and spawn helper, the workspace snapshots, artifacts, captured and
 * redacted output, the verdict) and its event log (the blob store in front of SQLite, group
 * commits answered after their fsync, the organization's hash chain), driven straight, AT_ONCE
 * trials at a time. Each trial's events are the ones the service appends for it (queued, claimed,
 * its outcome), with the same expected revisions. What it leaves out is what the service adds
 * around a trial: the saga and its scheduling, the projections and read models, HTTP and the watch
 * stream, Nest. Run in a process of its own (see floor-process.ts), with a log that lives as long
 * as that process, as a server's does.
 */
export interface StraightMeasure {
  wallMs: number;
  /** CPU ms per trial; `server*` is this process's: the runner and the log, what the server's own would be without the rest. */
  perTrial: CpuSplit;
}

const ORGANIZATION = 'bench';
const CASES = 10;

export class StraightTrials {
  private constructor(
    private readonly data: ReturnType<typeof tempDir>,
    private readonly log: EventStore,
    private readonly runner: TrialRunner,
    private readonly trialsRoot: ReturnType<typeof tempDir>,
  ) {}

  /** A log in a temporary data directory, and a runner whose trial directories go under `under` (the system's temporary directory by default). */
  static open(driver: SandboxDriverName, under?: string): StraightTrials {
    const data = tempDir('straight-data');
    const trialsRoot = tempDir('straight-trials', under);
    const log = new BlobBackedEventStore(SqliteEventStore.open(data.file('events.sqlite')), FileBlobStore.inDataDirectory(data.dir));
    const config = parseExecutionConfig({ allowUnsandboxed: true, defaultSandbox: driver }, 'bench config');
    const runner = createTrialRunner({ dataDir: data.dir, config, trialsRoot: trialsRoot.dir });
    return new StraightTrials(data, log, runner, trialsRoot);
  }

  async batch(workload: Workload): Promise<StraightMeasure> {
    const batchId = newId('bat');
    const runIds = Array.from({ length: CASES }, () => newId('run'));
    const refs: TrialRef[] = Array.from({ length: TRIALS }, (_, index) => ({
      trialId: newId('trl'),
      runId: runIds[index % CASES],
      batchId,
      organization: ORGANIZATION,
    }));
    const metadata: EventMetadata = { organization: ORGANIZATION, actor: 'system:bench', correlationId: batchId, causationId: batchId };
    const before = cpuSplit(process.pid);
    const started = performance.now();
    const queuedAt = new Date().toISOString();
    await Promise.all(refs.map((ref, ordinal) => this.append(ref, [{ type: 'TrialQueued', data: { ...ref, ordinal, queuedAt } }], 'no_stream', metadata)));
    // The batch's end, as the service's: its last outcome stored (not its last directory removed).
    let lastRecorded = started;
    const trials: Array<Promise<void>> = [];
    let next = 0;
    const slot = async () => {
      while (next < refs.length) {
        const ref = refs[next++];
        await new Promise<void>((freed) => {
          const recorded = () => {
            lastRecorded = Math.max(lastRecorded, performance.now());
          };
          const trial = this.trial(ref, workload, metadata, freed, recorded).finally(freed);
          // Reported by the Promise.all below, not as an unhandled rejection meanwhile.
          trial.catch(() => undefined);
          trials.push(trial);
        });
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, slot));
    await Promise.all(trials);
    const wallMs = lastRecorded - started;
    const after = cpuSplit(process.pid);
    const perTrial = (key: keyof CpuSplit) => (after[key] - before[key]) / TRIALS;
    return {
      wallMs,
      perTrial: {
        serverUser: perTrial('serverUser'),
        serverKernel: perTrial('serverKernel'),
        helpers: perTrial('helpers'),
        trialProcesses: perTrial('trialProcesses'),
      },
    };
  }

  async close(): Promise<void> {
    await this.log.close();
    this.trialsRoot.remove();
    this.data.remove();
  }

  /**
   * Claimed, run, and its outcome appended as soon as its processes have ended. As in the saga,
   * the slot is `freed` once that append is made (the next trial's claim joins its group commit),
   * while the runner removes the trial's directory.
   */
  private async trial(ref: TrialRef, workload: Workload, metadata: EventMetadata, freed: () => void, recorded: () => void): Promise<void> {
    await this.append(ref, [claimEvent(ref, { instanceId: 'bench', leaseMs: 30_000 }, new Date())], 0, metadata);
    let recording: Promise<void> = Promise.resolve();
    const outcome = await this.runner.run(this.spec(ref, workload), undefined, (ended) => {
      const costInput = { harness: 'command', model: 'none', sandbox: null, usage: null, hasSimulatedUser: false };
      recording = this.append(ref, trialResultEvents(ref, ended, costInput, new Date()), 1, metadata).then(recorded);
      freed();
    });
    await recording;
    if (outcome.status !== 'passed') throw new Error(`A straight trial ended ${outcome.status}: ${outcome.failure ?? ''}`);
  }

  private async append(ref: TrialRef, events: TrialEvent[], expected: ExpectedRevision, metadata: EventMetadata): Promise<void> {
    const stored = events.map((event) => ({ id: newEventId(), type: event.type, data: event.data, metadata }));
    await this.log.append(trialStream(ref.trialId), stored, expected);
  }

  private spec(ref: TrialRef, workload: Workload): TrialSpec {
    return {
      trialId: ref.trialId,
      organization: ORGANIZATION,
      prompt: 'benchmark',
      source: { kind: 'empty' },
      cache: null,
      profile: { run: workload.run },
      harness: 'command',
      model: 'none',
      sandbox: null,
      timeoutMs: 60_000,
      verify: workload.verify,
      env: {},
      secrets: [],
      user: null,
      maxTurns: 8,
      variables: {},
      validator: null,
      prepare: null,
      providerKeys: {},
    };
  }
}
