import type { AllSubscription, EventStore, RecordedEvent } from '../event-store/event-store.port';
import type { ReadStore } from '../read-store/read-store.port';
import type { JsonLogger } from '../logging/json-logger';
import type { Projection } from './projection';
import { PositionWaiters } from './position-waiters';

export const CHECKPOINTS = 'checkpoints';
const CHECKPOINT_EVERY = 500;
const CHECKPOINT_DELAY_MS = 100;

/** A projection and how many events it has applied since the runner started. */
interface ProjectionEntry {
  readonly projection: Projection;
  applied: number;
}

type Checkpoint = {
  _id: string;
  position: number;
};

/**
 * The checkpointed `$all` consumer that feeds every projection. The checkpoint lives in the
 * read store beside the documents it describes, so both are dropped and rebuilt together.
 */
export class ProjectionRunner {
  private readonly byType = new Map<string, ProjectionEntry[]>();
  private readonly byName = new Map<string, ProjectionEntry>();
  private readonly waiters = new PositionWaiters();
  private readonly observers: EventObserver[] = [];
  private caughtUp = false;
  private subscription: AllSubscription | null = null;
  private loop: Promise<void> | null = null;
  private failure: Error | null = null;
  private processed = -1;
  private handledSinceStart = 0;
  /** The position last written as the checkpoint, and a pending write of a newer one. */
  private checkpointed = -1;
  private checkpointTimer: NodeJS.Timeout | null = null;
  private sinceCheckpoint = 0;

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly projections: readonly Projection[],
    private readonly logger: JsonLogger,
    private readonly checkpointId = 'projections',
  ) {
    for (const projection of projections) {
      const entry = { projection, applied: 0 };
      this.byName.set(projection.name, entry);
      for (const type of projection.eventTypes) {
        this.byType.set(type, [...(this.byType.get(type) ?? []), entry]);
      }
    }
  }

  /** The position of the last event the read models reflect (-1 before the first). */
  get position(): number {
    return this.processed;
  }

  /**
   * How many events a projection has applied since this runner started: when it changes, that
   * projection's documents may have changed, so whatever was derived from them is stale.
   */
  generation(projectionName: string): number {
    return this.byName.get(projectionName)?.applied ?? 0;
  }

  get error(): Error | null {
    return this.failure;
  }

  async ensureIndexes(): Promise<void> {
    for (const projection of this.projections) {
      for (const [collection, indexes] of Object.entries(projection.collections)) {
        await this.readStore.ensureIndexes(collection, indexes);
      }
    }
  }

  /**
   * Tells `observer` of every event the runner applies from now on (the metrics count from this
   * feed rather than opening a second subscription), with `live` false while it catches up.
   */
  observe(observer: EventObserver): void {
    this.observers.push(observer);
  }

  /** Starts consuming from the checkpoint and resolves once the log's current head is reached. */
  async start(): Promise<void> {
    await this.ensureIndexes();
    const checkpoint = await this.readStore.collection<Checkpoint>(CHECKPOINTS).findOne({ _id: this.checkpointId });
    this.processed = checkpoint?.position ?? -1;
    this.checkpointed = this.processed;
    const head = await this.eventStore.headPosition();
    const started = Date.now();
    this.subscription = this.eventStore.subscribeToAll(this.processed >= 0 ? { after: this.processed } : {});
    this.loop = this.consume(this.subscription);
    await this.waitFor(head, Number.POSITIVE_INFINITY);
    this.caughtUp = true;
    this.logger.info('read models caught up', {
      events: this.handledSinceStart,
      position: this.processed,
      durationMs: Date.now() - started,
    });
  }

  /** Resolves true once the read models reflect `position`, false after `timeoutMs`. */
  waitFor(position: number, timeoutMs: number): Promise<boolean> {
    if (this.failure) return Promise.reject(this.failure);
    return this.waiters.waitFor(position, this.processed, timeoutMs);
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.loop;
    await this.writeCheckpoint();
    this.waiters.rejectAll(new Error('The projection runner stopped.'));
  }

  private async consume(subscription: AllSubscription): Promise<void> {
    try {
      for await (const event of subscription) {
        await this.handle(event);
      }
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.logger.error('projection runner stopped on an error', {
        position: this.processed,
        error: this.failure.message,
      });
      this.waiters.rejectAll(this.failure);
    }
  }

  /**
   * The checkpoint is written every CHECKPOINT_EVERY events and shortly after the last one, not
   * per event: documents guard themselves by position, so a checkpoint that lags only means a
   * few events are delivered again after a restart, and they change nothing.
   */
  private async scheduleCheckpoint(): Promise<void> {
    this.sinceCheckpoint += 1;
    if (this.sinceCheckpoint >= CHECKPOINT_EVERY) {
      await this.writeCheckpoint();
      return;
    }
    this.checkpointTimer ??= setTimeout(() => {
      this.checkpointTimer = null;
      this.writeCheckpoint().catch((error: unknown) =>
        this.logger.warn('checkpoint write failed', { error: error instanceof Error ? error.message : String(error) }),
      );
    }, CHECKPOINT_DELAY_MS);
  }

  private async writeCheckpoint(): Promise<void> {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = null;
    const position = this.processed;
    this.sinceCheckpoint = 0;
    if (position <= this.checkpointed) return;
    await this.readStore.collection<Checkpoint>(CHECKPOINTS).replaceOne({ _id: this.checkpointId }, { _id: this.checkpointId, position }, { upsert: true });
    this.checkpointed = Math.max(this.checkpointed, position);
  }

  /** Applies one event to every projection that handles it, then moves the checkpoint. */
  async handle(event: RecordedEvent): Promise<void> {
    for (const entry of this.byType.get(event.type) ?? []) {
      await entry.projection.project(event, this.readStore);
      entry.applied += 1;
    }
    // A redelivered older event never moves the checkpoint back.
    this.processed = Math.max(this.processed, event.position);
    await this.scheduleCheckpoint();
    this.handledSinceStart += 1;
    if (this.handledSinceStart % 50000 === 0) {
      this.logger.info('projecting events', { events: this.handledSinceStart, position: event.position });
    }
    for (const observer of this.observers) observer(event, this.caughtUp);
    this.waiters.reached(event.position);
  }
}

export type EventObserver = (event: RecordedEvent, live: boolean) => void;
