import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import type { BatchSlotReleased, BatchSlotTaken, HeldSlot } from '../batches/batch-slots.decider';
import type { BatchFailed, BatchFinished, BatchStarted, PlannedRun } from '../batches/batch.events';
import type { RunFinished } from '../runs/run.events';
import type { CostRecord } from '../trials/costs';
import { TRIAL_EVENT_TYPES, TrialEvent, TrialLeaseRenewed } from '../trials/trial.events';

export type SagaTrialStatus = 'planned' | 'queued' | 'running' | 'passed' | 'failed' | 'void';

export interface SagaTrial {
  trialId: string;
  runId: string;
  batchId: string;
  ordinal: number;
  status: SagaTrialStatus;
  /** The trial stream's last revision (-1 before TrialQueued). */
  revision: number;
  commands: number;
  serviceFault: boolean;
  failure: string | null;
  costs: CostRecord | null;
  /** The server instance whose claim started it (null: a local runner's, or stored before claims named one). */
  owner: string | null;
  /** When it started, epoch milliseconds (null before TrialStarted). */
  startedAtMs: number | null;
  /** When its owner's claim lapses unless renewed, epoch milliseconds (null: the claim named no lease). */
  leaseExpiresAtMs: number | null;
}

export interface SagaRun {
  run: PlannedRun;
  batchId: string;
  finished: boolean;
  failed: boolean;
  failure: string | null;
}

export interface SagaBatch {
  started: BatchStarted['data'];
  /** Who started the batch (the actor of BatchStarted): personal connections are theirs alone. */
  requester: string;
  finished: boolean;
  slotReleased: boolean;
}

/** A slot whose start has not recorded its batch (yet): released by the saga once overdue. */
export interface UnstartedSlot extends HeldSlot {
  organization: string;
}

const TERMINAL = new Set<SagaTrialStatus>(['passed', 'failed', 'void']);

/** The events the saga follows: a batch's slot, its start and end, its trials, its runs' ends. */
export type SagaEvent = BatchSlotTaken | BatchStarted | TrialEvent | TrialLeaseRenewed | RunFinished | BatchFinished | BatchFailed | BatchSlotReleased;

const SAGA_EVENT_TYPES: ReadonlySet<string> = new Set<SagaEvent['type']>([
  'BatchSlotTaken',
  'BatchStarted',
  ...TRIAL_EVENT_TYPES,
  'TrialLeaseRenewed',
  'RunFinished',
  'BatchFinished',
  'BatchFailed',
  'BatchSlotReleased',
]);

/** The stored type string is the contract: an event of one of these types has that type's data. */
function isSagaEvent(event: RecordedEvent): event is RecordedEvent & SagaEvent {
  return SAGA_EVENT_TYPES.has(event.type);
}

/**
 * Events that only add to a trial's record (its trajectory, its checks) or push its lease further:
 * none changes what the saga decides, which follows a trial's status, a run's or a batch's end and
 * a batch's slot. The saga applies them and does not react: a trial's outcome is nine events, and
 * each reaction walks every trial of its batch.
 */
const RECORD_ONLY: ReadonlySet<string> = new Set<SagaEvent['type']>([
  'TrialCommandRecorded',
  'TrialMessageRecorded',
  'TrialConversationEnded',
  'TrialPrepared',
  'TrialModelCalled',
  'TrialToolCalled',
  'TrialDiffRecorded',
  'TrialVerified',
  'TrialValidated',
  'TrialLeaseRenewed',
]);

/** Whether the saga should move the event's batch on once it applied the event. */
export function movesBatch(event: RecordedEvent): boolean {
  return !RECORD_ONLY.has(event.type);
}

export function isTerminal(status: SagaTrialStatus): boolean {
  return TERMINAL.has(status);
}

/**
 * What the saga knows, derived from stored events only: after a crash, replaying the log gives
 * back exactly this state, and with it what is left to do.
 */
export class SagaState {
  readonly batches = new Map<string, SagaBatch>();
  readonly runs = new Map<string, SagaRun>();
  readonly trials = new Map<string, SagaTrial>();
  /** Slots taken by starts that have not recorded their batch, by batch id. */
  readonly unstartedSlots = new Map<string, UnstartedSlot>();

  /** Applies one event; answers the batch it concerns, or null when it concerns none. */
  evolve(event: RecordedEvent): string | null {
    if (!isSagaEvent(event)) return null;
    switch (event.type) {
      case 'BatchSlotTaken':
        return this.slotTaken(event.data);
      case 'BatchStarted':
        this.unstartedSlots.delete(event.data.batchId);
        return this.started(event.data, event.metadata.actor);
      case 'RunFinished':
        return this.runFinished(event.data);
      case 'BatchFinished':
      case 'BatchFailed':
        return this.batchEnded(event.data.batchId);
      case 'BatchSlotReleased':
        return this.slotReleased(event.data.batchId);
      default:
        return this.trialEvent(event, event.revision);
    }
  }

  /** Drops a batch that is over and has given back its slot: nothing is left to do for it. */
  forget(batchId: string): void {
    const batch = this.batches.get(batchId);
    if (!batch) return;
    for (const run of batch.started.runs) {
      run.trialIds.forEach((trialId) => this.trials.delete(trialId));
      this.runs.delete(run.runId);
    }
    this.batches.delete(batchId);
  }

  trialsOf(run: SagaRun): SagaTrial[] {
    return run.run.trialIds.map((trialId) => {
      const trial = this.trials.get(trialId);
      if (!trial) throw new Error(`The saga has no trial "${trialId}" of run "${run.run.runId}".`);
      return trial;
    });
  }

  runsOf(batch: SagaBatch): SagaRun[] {
    return batch.started.runs.map((planned) => {
      const run = this.runs.get(planned.runId);
      if (!run) throw new Error(`The saga has no run "${planned.runId}" of batch "${batch.started.batchId}".`);
      return run;
    });
  }

  private started(data: BatchStarted['data'], requester: string): string {
    this.batches.set(data.batchId, { started: data, requester, finished: false, slotReleased: false });
    for (const run of data.runs) {
      this.runs.set(run.runId, { run, batchId: data.batchId, finished: false, failed: false, failure: null });
      run.trialIds.forEach((trialId, index) => {
        this.trials.set(trialId, {
          trialId,
          runId: run.runId,
          batchId: data.batchId,
          ordinal: index + 1,
          status: 'planned',
          revision: -1,
          commands: 0,
          serviceFault: false,
          failure: null,
          costs: null,
          owner: null,
          startedAtMs: null,
          leaseExpiresAtMs: null,
        });
      });
    }
    return data.batchId;
  }

  private trialEvent(event: TrialEvent | TrialLeaseRenewed, revision: number): string | null {
    const trial = this.trials.get(event.data.trialId);
    if (!trial) return null;
    trial.revision = Math.max(trial.revision, revision);
    if (event.type === 'TrialQueued' && trial.status === 'planned') trial.status = 'queued';
    if (event.type === 'TrialStarted' && !isTerminal(trial.status)) {
      const { instanceId, leaseExpiresAt, startedAt } = event.data;
      Object.assign(trial, { status: 'running', owner: instanceId ?? null, startedAtMs: Date.parse(startedAt), leaseExpiresAtMs: epochOrNull(leaseExpiresAt) });
    }
    if (event.type === 'TrialLeaseRenewed') trial.leaseExpiresAtMs = Date.parse(event.data.leaseExpiresAt);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a stored event is JSON read back: an entry may be missing, and is then not counted
    if (event.type === 'TrialCommandRecorded') trial.commands += event.data.entry ? 1 : 0;
    if (event.type === 'TrialScored') {
      const { status, costs, failure } = event.data;
      Object.assign(trial, { status, costs, failure: failure ?? null });
    }
    if (event.type === 'TrialVoided') {
      const { costs, failure, serviceFault } = event.data;
      Object.assign(trial, { status: 'void', costs, failure, serviceFault });
    }
    return trial.batchId;
  }

  private runFinished(data: RunFinished['data']): string | null {
    const run = this.runs.get(data.runId);
    if (!run) return null;
    Object.assign(run, { finished: true, failed: data.status === 'failed', failure: data.failure });
    return run.batchId;
  }

  private batchEnded(batchId: string): string | null {
    const batch = this.batches.get(batchId);
    if (batch) batch.finished = true;
    return batch ? batchId : null;
  }

  private slotTaken(data: BatchSlotTaken['data']): null {
    const { organization, batchId, takenAt, idempotencyKey } = data;
    if (!this.batches.has(batchId))
      this.unstartedSlots.set(batchId, { organization, batchId, takenAtMs: Date.parse(takenAt), idempotencyKey: idempotencyKey ?? null });
    return null;
  }

  private slotReleased(batchId: string): string | null {
    this.unstartedSlots.delete(batchId);
    const batch = this.batches.get(batchId);
    if (batch) batch.slotReleased = true;
    return batch ? batchId : null;
  }
}

function epochOrNull(iso: string | undefined): number | null {
  return iso === undefined ? null : Date.parse(iso);
}
