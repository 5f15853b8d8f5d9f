import type { EventStore, RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { batchStream, BatchStarted, PlannedRun } from '../batches/batch.events';
import { runByRunner } from '../batches/local-runs';
import { trialStream, TrialScored, TrialVoided } from '../trials/trial.events';
import { runnerStream, RunnerEvent, TrialLeased } from './runner.events';

export interface TrialLease {
  id: string;
  leasedAtMs: number;
  /** As leased; beats push it on (see leaseExpiry). */
  expiresAtMs: number;
}

/** A trial of one of the runner's runs, as far as leasing and reporting are concerned. */
export interface LocalTrial {
  trialId: string;
  run: PlannedRun;
  ordinal: number;
  /** planned: no TrialQueued yet; queued: leasable; leased: a runner holds it; done: its verdict is recorded. */
  status: 'planned' | 'queued' | 'leased' | 'done';
  /** The trial stream's last revision; -1 while it has none. */
  revision: number;
  lease: TrialLease | null;
}

/** A batch as its runner endpoints and the silence watch see it, folded from stored events only. */
export interface RunnerBatch {
  started: BatchStarted['data'];
  /** Started by runner.batches.start. */
  local: boolean;
  /** BatchFinished or BatchFailed is recorded. */
  ended: boolean;
  runner: 'running' | 'finished' | 'silenced';
  /** The runner finished it as cancelled (stopped by its user): the batch ends failed. */
  cancelled: boolean;
  /** The runner stream's last revision; -1 while it has none. */
  runnerRevision: number;
  /** When the runner beat, in epoch milliseconds, ascending. */
  beats: number[];
  /** The runner's last sign of life (start, beat, lease or report), in epoch milliseconds. */
  lastSignalMs: number;
  trials: Map<string, LocalTrial>;
}

export function startedRunnerBatch(data: BatchStarted['data']): RunnerBatch {
  const local = data.local === true;
  const trials = new Map<string, LocalTrial>();
  if (local) {
    for (const run of data.runs.filter(runByRunner)) {
      run.trialIds.forEach((trialId, index) => trials.set(trialId, { trialId, run, ordinal: index + 1, status: 'planned', revision: -1, lease: null }));
    }
  }
  const startedAt = Date.parse(data.startedAt);
  return { started: data, local, ended: false, runner: 'running', cancelled: false, runnerRevision: -1, beats: [], lastSignalMs: startedAt, trials };
}

type FoldedEvent = RecordedEvent &
  ({ type: 'BatchFinished' | 'BatchFailed' } | RunnerEvent | TrialLeased | TrialScored | TrialVoided | { type: 'TrialQueued' });

/** Applies one stored event of the batch, its runner stream or one of its local trials. */
export function evolveRunnerBatch(batch: RunnerBatch, event: RecordedEvent): void {
  const folded = event as FoldedEvent;
  if (event.streamName === runnerStream(batch.started.batchId)) batch.runnerRevision = Math.max(batch.runnerRevision, event.revision);
  switch (folded.type) {
    case 'BatchFinished':
    case 'BatchFailed':
      batch.ended = true;
      return;
    case 'RunnerBeat': {
      const at = Date.parse(folded.data.at);
      batch.beats = [...batch.beats, at].sort((a, b) => a - b);
      signal(batch, at);
      return;
    }
    case 'RunnerFinished':
      if (batch.runner !== 'running') return;
      batch.runner = 'finished';
      batch.cancelled = folded.data.cancelled;
      return;
    case 'RunnerSilenced':
      if (batch.runner === 'running') batch.runner = 'silenced';
      return;
    default:
      trialEvent(batch, folded);
  }
}

function trialEvent(batch: RunnerBatch, event: FoldedEvent): void {
  const trialId = (event.data as { trialId?: string } | null)?.trialId;
  const trial = trialId === undefined ? undefined : batch.trials.get(trialId);
  if (!trial || event.streamName !== trialStream(trial.trialId)) return;
  trial.revision = Math.max(trial.revision, event.revision);
  if (event.type === 'TrialQueued' && trial.status === 'planned') trial.status = 'queued';
  if (event.type === 'TrialLeased') {
    const { leaseId, leasedAt, expiresAt } = event.data;
    if (trial.status !== 'done') trial.status = 'leased';
    trial.lease = { id: leaseId, leasedAtMs: Date.parse(leasedAt), expiresAtMs: Date.parse(expiresAt) };
    signal(batch, Date.parse(leasedAt));
  }
  if (event.type === 'TrialScored' || event.type === 'TrialVoided') {
    trial.status = 'done';
    signal(batch, Date.parse(event.data.finishedAt));
  }
}

function signal(batch: RunnerBatch, at: number): void {
  if (Number.isFinite(at)) batch.lastSignalMs = Math.max(batch.lastSignalMs, at);
}

/** The batch as stored now, or null when it does not exist. Reads the trial streams of a local batch only. */
export async function loadRunnerBatch(eventStore: EventStore, batchId: string): Promise<RunnerBatch | null> {
  const events = await eventStore.readStream(batchStream(batchId));
  const first = events.at(0);
  if (first?.type !== 'BatchStarted') return null;
  const batch = startedRunnerBatch((first as unknown as BatchStarted).data);
  events.slice(1).forEach((event) => evolveRunnerBatch(batch, event));
  if (!batch.local) return batch;
  const streams = [runnerStream(batchId), ...[...batch.trials.keys()].map(trialStream)];
  const read = await Promise.all(streams.map((stream) => eventStore.readStream(stream)));
  read.flat().forEach((event) => evolveRunnerBatch(batch, event));
  return batch;
}
