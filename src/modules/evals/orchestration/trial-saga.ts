import { setMaxListeners } from 'node:events';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AllSubscription, EventMetadata, EventStore, RecordedEvent } from '#infrastructure/event-store/event-store.port';
import type { JsonLogger } from '#infrastructure/logging/json-logger';
import type { Clock } from '#shared/clock';
import type { TrialRunner } from '#trial-runner';
import { movesBatch, SagaState } from './saga-state';
import { TrialScheduler } from './trial-scheduler';
import type { TrialEnvironment } from '../trials/trial-environment';
import { SagaReactions } from './saga-reactions';
import { DEFAULT_RUNNER_TIMINGS, RunnerTimings } from '../runner/runner-settings';
import { RunnerWatch } from './runner-watch';
import { ClaimTerms, renewalIntervalMs } from './trial-lease';
import { releaseUnstartedSlot } from '../batches/unstarted-slots';

export interface TrialSagaOptions {
  maxParallelTrials: number;
  clock: Clock;
  /** Leases and silence of local runners; default 15 and 10 minutes. */
  runner?: RunnerTimings;
  /** This instance's name on its trial claims and their lease (ASSAY_INSTANCE_ID, ASSAY_TRIAL_LEASE_MS). */
  claims: ClaimTerms;
  /**
   * The position after which the catch-up at start may begin, because every batch the saga still
   * has work for began after it (see open-batches.projection.ts); default -1, the whole log.
   */
  catchUpAfter?: () => Promise<number>;
}

/** How long a stop waits for the trials it aborts to record that they were abandoned. */
const STOP_GRACE_MS = 10_000;

/**
 * The process manager that runs batches. It is driven by its own catch-up subscription to the
 * log, not by the in-memory bus: at start it replays the log into its state, then recovers
 * (queues what waits, finishes what can be finished), then reacts to each new event. Every
 * reaction appends with an expected revision or derived ids, so a redelivered event or a second
 * reaction appends nothing twice, here or on another instance sharing the log. Each instance
 * offers every queued trial to its scheduler; the trial's claim decides which one runs it.
 * A claim whose lease lapsed (its instance stopped) is voided by whichever instance sees it first:
 * at start, and on a sweep every third of the lease. The same sweep gives back the slot of a start
 * that took it and did not record its batch within a lease (its process died in between).
 *
 * A Nest provider of the evals module: it starts when the application boots, before the server
 * listens, and stops when the application shuts down, after the HTTP server has closed and
 * before the stores close.
 */
export class TrialSaga implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly state = new SagaState();
  private readonly scheduler: TrialScheduler;
  private readonly reactions: SagaReactions;
  private readonly watch: RunnerWatch;
  private readonly leaseMs: number;
  private sweeper: NodeJS.Timeout | null = null;
  private sweeping = false;
  private subscription: AllSubscription | null = null;
  private loop: Promise<void> | null = null;
  private live = false;
  private readonly abort = new AbortController();
  private readonly catchUpAfter: () => Promise<number>;
  private readonly clock: Clock;

  constructor(
    private readonly eventStore: EventStore,
    runner: TrialRunner,
    environment: TrialEnvironment,
    private readonly logger: JsonLogger,
    options: TrialSagaOptions,
  ) {
    // Every running trial listens for the stop: as many listeners as trials run at once.
    setMaxListeners(0, this.abort.signal);
    this.watch = new RunnerWatch(eventStore, logger, options.clock, options.runner ?? DEFAULT_RUNNER_TIMINGS);
    this.leaseMs = options.claims.leaseMs;
    this.clock = options.clock;
    this.catchUpAfter = options.catchUpAfter ?? (() => Promise.resolve(-1));
    this.reactions = new SagaReactions(eventStore, runner, environment, this.state, logger, this.abort.signal, options.clock, options.claims, (batchId) =>
      this.watch.failureOf(batchId),
    );
    // A trial whose outcome cannot be recorded (the store is down) stays running, to be recovered
    // as abandoned; the failure is logged, never left to end the process as an unhandled rejection.
    this.scheduler = new TrialScheduler(options.maxParallelTrials, (trialId) =>
      this.reactions
        .runTrial(trialId)
        .catch((error: unknown) =>
          this.logger.error('a trial could not be recorded', { trialId, error: error instanceof Error ? error.message : String(error) }),
        ),
    );
  }

  get runningTrials(): number {
    return this.scheduler.active;
  }

  onApplicationBootstrap(): Promise<void> {
    return this.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  async start(): Promise<void> {
    const head = await this.eventStore.headPosition();
    // Batches that ended and gave back their slot need nothing: the log before the oldest open one is skipped.
    const after = Math.min(head, await this.catchUpAfter());
    this.subscription = this.eventStore.subscribeToAll(after >= 0 ? { after } : {});
    this.logger.info('trial saga catching up', { from: after + 1, head });
    let caughtUp!: () => void;
    const ready = new Promise<void>((resolve) => (caughtUp = resolve));
    if (head <= after || head < 0) this.goLive(caughtUp);
    this.loop = this.consume(this.subscription, head, caughtUp);
    await ready;
  }

  async stop(): Promise<void> {
    this.scheduler.stop();
    if (this.sweeper) clearInterval(this.sweeper);
    await this.watch.stop();
    this.abort.abort();
    // The aborted trials record their end (abandoned) while the store is still open.
    await this.reactions.drain(STOP_GRACE_MS);
    await this.reactions.abandonUnfinished();
    await this.subscription?.close();
    await this.loop;
  }

  private async consume(subscription: AllSubscription, head: number, caughtUp: () => void): Promise<void> {
    try {
      for await (const event of subscription) {
        this.watch.evolve(event);
        const batchId = this.state.evolve(event);
        if (this.live && batchId && movesBatch(event)) await this.react(batchId, event);
        if (!this.live && event.position >= head) this.goLive(caughtUp);
      }
    } catch (error) {
      this.logger.error('the trial saga stopped on an error', { error: (error as Error).message });
    }
  }

  /** Caught up with the log as it was at start: recover, then react to each new event. */
  private goLive(caughtUp: () => void): void {
    this.live = true;
    const pending = [...this.state.batches.keys()];
    this.logger.info('trial saga recovering', { batches: pending.length });
    void (async () => {
      for (const batchId of pending) await this.react(batchId, null);
    })().finally(() => {
      this.watch.start();
      this.startSweeping();
      caughtUp();
    });
  }

  /** Another instance may stop at any time: its trials are voided when their claims lapse. */
  private startSweeping(): void {
    if (this.abort.signal.aborted) return;
    this.sweeper = setInterval(() => void this.sweep(), renewalIntervalMs(this.leaseMs));
    this.sweeper.unref();
  }

  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const batchIds = new Set<string>();
      for (const trial of this.state.trials.values()) {
        if (this.reactions.lapsed(trial)) batchIds.add(trial.batchId);
      }
      for (const batchId of batchIds) await this.react(batchId, null);
      await this.releaseUnstartedSlots();
    } finally {
      this.sweeping = false;
    }
  }

  /** Gives back the slots of starts that held them past a lease without recording their batch. */
  private async releaseUnstartedSlots(): Promise<void> {
    const now = this.clock.now();
    const overdue = [...this.state.unstartedSlots.values()].filter((slot) => slot.takenAtMs + this.leaseMs <= now.getTime());
    for (const slot of overdue) {
      try {
        const metadata = { organization: slot.organization, actor: 'system:trial-saga', correlationId: slot.batchId, causationId: 'recovery' };
        if (await releaseUnstartedSlot(this.eventStore, slot.organization, slot, now, metadata)) {
          this.logger.warn('gave back the slot of a batch whose start did not complete', { batchId: slot.batchId, organization: slot.organization });
        }
      } catch (error) {
        this.logger.error('could not give back the slot of a start that did not complete', { batchId: slot.batchId, error: (error as Error).message });
      }
    }
  }

  private async react(batchId: string, event: RecordedEvent | null): Promise<void> {
    try {
      await this.reactions.advanceBatch(batchId, metadataOf(event), (trialId) => this.scheduler.enqueue(batchId, trialId));
    } catch (error) {
      this.logger.error('a saga reaction failed', { batchId, error: (error as Error).message, stack: (error as Error).stack });
    }
  }
}

function metadataOf(event: RecordedEvent | null): Pick<EventMetadata, 'correlationId' | 'causationId'> {
  if (!event) return { correlationId: 'recovery', causationId: 'recovery' };
  return { correlationId: event.metadata.correlationId, causationId: event.id };
}
