import type { EventMetadata, EventStore, RecordedEvent } from '#infrastructure/event-store/event-store.port';
import type { JsonLogger } from '#infrastructure/logging/json-logger';
import type { Clock } from '#shared/clock';
import type { BatchFailed, BatchFinished, BatchStarted } from '../batches/batch.events';
import { evolveRunnerBatch, loadRunnerBatch, RunnerBatch, startedRunnerBatch } from '../runner/runner-batch';
import { isSilent } from '../runner/runner-decisions';
import { appendRunnerEvent, releaseRunnerSlot, voidUnreported } from '../runner/runner-writes';
import type { RunnerTimings } from '../runner/runner-settings';
import { BATCH_CANCELLED_FAILURE, CANCELLED_FAILURE, runnerStream, SILENCED_FAILURE, UNREPORTED_FAILURE } from '../runner/runner.events';

/**
 * Watches the batches local runners run, from the saga's own subscription: a batch whose
 * runner went silent (see isSilent) is silenced: RunnerSilenced, its slot given back, its
 * unreported trials voided; the saga then ends it as failed. Everything it knows is folded
 * from stored events, so after a restart silence counts from the last recorded sign of life,
 * and a silencing or a finish that a dead process left half done is completed.
 */
export class RunnerWatch {
  private readonly batches = new Map<string, RunnerBatch>();
  private timer: NodeJS.Timeout | null = null;
  private tick: Promise<void> = Promise.resolve();

  constructor(
    private readonly eventStore: EventStore,
    private readonly logger: JsonLogger,
    private readonly clock: Clock,
    private readonly timings: RunnerTimings,
  ) {}

  evolve(event: RecordedEvent): void {
    if (event.type === 'BatchStarted') {
      const data = (event as unknown as BatchStarted).data;
      if (data.local === true) this.batches.set(data.batchId, startedRunnerBatch(data));
      return;
    }
    const batchId = (event.data as { batchId?: unknown } | null)?.batchId;
    const batch = typeof batchId === 'string' ? this.batches.get(batchId) : undefined;
    if (!batch) return;
    evolveRunnerBatch(batch, event);
    if (event.type === 'BatchFinished' || event.type === 'BatchFailed') this.batches.delete((event as BatchFinished | BatchFailed).data.batchId);
  }

  /** The failure the saga ends a silenced or cancelled batch with; null for every other batch. */
  failureOf(batchId: string): string | null {
    const batch = this.batches.get(batchId);
    if (batch?.runner === 'silenced') return SILENCED_FAILURE;
    return batch?.runner === 'finished' && batch.cancelled ? BATCH_CANCELLED_FAILURE : null;
  }

  start(): void {
    const every = Math.min(30_000, Math.max(250, Math.floor(this.timings.silenceMs / 4)));
    this.timer = setInterval(() => {
      this.tick = this.tick
        .then(() => this.check())
        .catch((error: unknown) => this.logger.error('the runner watch failed', { error: (error as Error).message }));
    }, every);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.tick;
  }

  private async check(): Promise<void> {
    const now = this.clock.now();
    for (const [batchId, known] of [...this.batches]) {
      if (this.timer === null) return;
      const unfinished = [...known.trials.values()].some((trial) => trial.status !== 'done');
      if (known.runner === 'running' && isSilent(known, now, this.timings)) await this.silence(batchId, now);
      else if (known.runner !== 'running' && !known.ended && unfinished) await this.complete(known, now);
    }
  }

  /** Re-read from the log first: a beat, lease or report this watch has not seen yet keeps the batch. */
  private async silence(batchId: string, now: Date): Promise<void> {
    const batch = await loadRunnerBatch(this.eventStore, batchId);
    if (!batch || !isSilent(batch, now, this.timings)) return;
    const { organization } = batch.started;
    const event = { type: 'RunnerSilenced' as const, data: { batchId, organization, at: now.toISOString(), failure: SILENCED_FAILURE } };
    if (!(await appendRunnerEvent(this.eventStore, batch, event, this.metadata(organization, batchId)))) return;
    this.logger.warn('a local batch failed: its runner stopped checking in', { batchId, silentForMs: now.getTime() - batch.lastSignalMs });
    batch.runner = 'silenced';
    await this.complete(batch, now);
  }

  /** The slot back and every unreported trial void: the saga's usual ending follows. */
  private async complete(batch: RunnerBatch, now: Date): Promise<void> {
    const { organization, batchId } = batch.started;
    const metadata = this.metadata(organization, batchId);
    const silenced = batch.runner === 'silenced';
    if (silenced) await releaseRunnerSlot(this.eventStore, batch, SILENCED_FAILURE, now, metadata);
    const failure = silenced ? SILENCED_FAILURE : await this.finishFailure(batchId);
    await voidUnreported(this.eventStore, batchId, failure, now, { leaseMs: this.timings.leaseMs, metadata });
  }

  private async finishFailure(batchId: string): Promise<string> {
    const events = await this.eventStore.readStream(runnerStream(batchId));
    const finished = events.find((event) => event.type === 'RunnerFinished') as { data: { cancelled: boolean } } | undefined;
    return finished?.data.cancelled ? CANCELLED_FAILURE : UNREPORTED_FAILURE;
  }

  private metadata(organization: string, batchId: string): EventMetadata {
    return { organization, actor: 'system:runner-watch', correlationId: batchId, causationId: batchId };
  }
}

/** A silenced or cancelled batch ends as failed with the watch's failure, whatever its runs say. */
export function withRunnerFailure(ending: BatchFinished | BatchFailed, failure: string | null): BatchFinished | BatchFailed {
  if (failure === null) return ending;
  const { batchId, organization, finishedAt } = ending.data;
  return { type: 'BatchFailed', data: { batchId, organization, finishedAt, failure } };
}
