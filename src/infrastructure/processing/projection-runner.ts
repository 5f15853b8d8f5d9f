import type { AllSubscription, EventStore, RecordedEvent } from '../event-store/event-store.port';
import { DuplicateKey, ReadStore } from '../read-store/read-store.port';
import type { JsonLogger } from '../logging/json-logger';
import type { Projection } from './projection';
import { BatchedReplayStore } from './batched-replay';
import { PositionWaiters } from './position-waiters';

export const CHECKPOINTS = 'checkpoints';
const CHECKPOINT_EVERY = 500;
/**
 * While catching up (a start's replay): a checkpoint is one write per projection, and a crash
 * meanwhile only means the events since the last one are delivered again, changing nothing.
 */
const CHECKPOINT_EVERY_CATCHING_UP = 5_000;
const CHECKPOINT_DELAY_MS = 100;

/** A projection, how many events it has applied since the runner started, and where its checkpoint stood then. */
interface ProjectionEntry {
  readonly projection: Projection;
  applied: number;
  /** Events at or before this position were applied before this start: they are not delivered again. */
  from: number;
  /** Its catch-up's writes go through the batched replay (batched-replay.ts). */
  batched: boolean;
}

type Checkpoint = {
  _id: string;
  position: number;
};

export interface ProjectionRunnerOptions {
  /**
   * While catching up, hold the projections' guarded writes and send them in ordered bulks
   * (batched-replay.ts): for a replay into collections no other projector writes (a rebuild's).
   * Without it, the first catch-up of a projection that has no checkpoint and whose collections
   * are empty and its own (a new MongoDB database, or a projection an upgrade added) is batched.
   */
  batchedCatchUp?: boolean;
}

/** Whether this runner applies events ('owner') or another instance does into a shared read store ('follower'). */
export type ProjectionRole = 'owner' | 'follower';

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
  private inEvent = false;
  /** Set while another instance projects (projection-election.ts): positions then come from follow(). */
  private following = false;
  /** Counts starts and pauses, so that a start overtaken by a pause does not subscribe. */
  private starts = 0;
  /** Where the catch-up's writes are held (batchedCatchUp), the head it catches up to, and the position its sent writes reflect. */
  private replay: BatchedReplayStore | null = null;
  private readonly batchedCatchUp: boolean;
  private catchUpHead = -1;
  private replayed = -1;

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly projections: readonly Projection[],
    private readonly logger: JsonLogger,
    private readonly checkpointId = 'projections',
    options: ProjectionRunnerOptions = {},
  ) {
    this.batchedCatchUp = options.batchedCatchUp === true;
    for (const projection of projections) {
      const entry = { projection, applied: 0, from: -1, batched: false };
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

  /** True while an event is being applied: the read models are then between two positions. */
  get applying(): boolean {
    return this.inEvent;
  }

  /** The checkpoint document of one projection: each has its own, so one can be rebuilt or added alone. */
  checkpointOf(projectionName: string): string {
    return `${this.checkpointId}/${projectionName}`;
  }

  /** Every checkpoint document this runner writes. */
  checkpointIds(): string[] {
    return [...this.byName.keys()].map((name) => this.checkpointOf(name));
  }

  get error(): Error | null {
    return this.failure;
  }

  async ensureIndexes(): Promise<void> {
    for (const projection of this.projections) {
      for (const [collection, indexes] of Object.entries(projection.collections)) {
        // A rebuilt index was declared otherwise by an earlier release; its rebuild held the collection's writes meanwhile.
        for (const rebuilt of await this.readStore.ensureIndexes(collection, indexes)) {
          this.logger.warn('read-model index dropped and built again: its declaration changed', { ...rebuilt });
        }
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
    const attempt = ++this.starts;
    this.following = false;
    this.failure = null;
    await this.ensureIndexes();
    this.processed = await this.readCheckpoints();
    this.checkpointed = this.processed;
    if (!this.caughtUp && this.replay === null && (await this.batchFreshProjections())) this.replay = new BatchedReplayStore(this.readStore);
    const head = await this.eventStore.headPosition();
    this.catchUpHead = head;
    if (attempt !== this.starts) return;
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

  /**
   * Each projection resumes after its own checkpoint (a new or rebuilt one has none and starts
   * from the beginning); the subscription starts after the lowest of them.
   */
  private async readCheckpoints(): Promise<number> {
    if (this.byName.size === 0) return -1;
    const checkpoints = this.readStore.collection<Checkpoint>(CHECKPOINTS);
    let lowest = Number.POSITIVE_INFINITY;
    for (const entry of this.byName.values()) {
      const checkpoint = await checkpoints.findOne({ _id: this.checkpointOf(entry.projection.name) });
      entry.from = checkpoint?.position ?? -1;
      lowest = Math.min(lowest, entry.from);
    }
    return lowest;
  }

  /**
   * Marks the projections whose catch-up is a replay into collections of their own: each has no
   * checkpoint, and its collections are empty and written by no projection that has one (nobody
   * projected into them), in a store whose writes go on round trips (not the in-memory one, which
   * applies each event in one step). With batchedCatchUp, every projection. A lapsed owner writing
   * into them meanwhile makes a bulk fail, and the catch-up stop. True when any is marked.
   */
  private async batchFreshProjections(): Promise<boolean> {
    const entries = [...this.byName.values()];
    if (this.batchedCatchUp) {
      for (const entry of entries) entry.batched = true;
      return entries.length > 0;
    }
    const collectionsOf = (entry: ProjectionEntry) => Object.keys(entry.projection.collections);
    const written = new Set(entries.filter((entry) => entry.from !== -1).flatMap(collectionsOf));
    for (const entry of entries) {
      if (entry.from !== -1 || collectionsOf(entry).some((name) => written.has(name))) continue;
      entry.batched = true;
      for (const name of collectionsOf(entry)) {
        const collection = this.readStore.collection(name);
        if (collection.evolveOne || (await collection.findOne({})) !== null) entry.batched = false;
      }
    }
    return entries.some((entry) => entry.batched);
  }

  /** Resolves true once the read models reflect `position`, false after `timeoutMs`. */
  waitFor(position: number, timeoutMs: number): Promise<boolean> {
    if (this.failure) return Promise.reject(this.failure);
    return this.waiters.waitFor(position, this.written, timeoutMs);
  }

  /** The position the stored documents reflect: behind `position` while writes of a batched catch-up are held. */
  private get written(): number {
    return this.replay && this.replay.pending > 0 ? this.replayed : this.processed;
  }

  /** Sends the catch-up's held writes; then the documents reflect what was applied. */
  private async flushReplay(): Promise<void> {
    if (!this.replay) return;
    const position = this.processed;
    await this.replay.flush();
    this.replayed = Math.max(this.replayed, position);
    this.waiters.reached(position);
  }

  /** The store a projection writes: the batched one while its batched catch-up lasts. */
  private storeFor(entry: ProjectionEntry): ReadStore {
    return this.replay && entry.batched && !this.caughtUp ? this.replay : this.readStore;
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
        // Most events are applied synchronously (the in-memory store): no promise to wait for.
        const applying = this.apply(event);
        if (applying) await applying;
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
   * The checkpoint is written every CHECKPOINT_EVERY events (CHECKPOINT_EVERY_CATCHING_UP while
   * catching up) and shortly after the last one, not per event: documents guard themselves by
   * position, so a checkpoint that lags only means a few events are delivered again after a
   * restart, and they change nothing. A promise only when it writes one now.
   */
  private scheduleCheckpoint(): Promise<void> | undefined {
    this.sinceCheckpoint += 1;
    if (this.sinceCheckpoint >= (this.caughtUp ? CHECKPOINT_EVERY : CHECKPOINT_EVERY_CATCHING_UP)) return this.writeCheckpoint();
    // A batched catch-up sends its writes at its head (moveOn), and its checkpoint with them.
    if (this.replay && !this.caughtUp) return undefined;
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
    // A checkpoint never passes the documents it covers: held writes go first.
    await this.flushReplay();
    const position = this.processed;
    this.sinceCheckpoint = 0;
    if (position <= this.checkpointed) return;
    const checkpoints = this.readStore.collection<Checkpoint>(CHECKPOINTS);
    for (const name of this.byName.keys()) {
      const _id = this.checkpointOf(name);
      // Guarded in the write itself: a checkpoint only moves forwards, whoever else writes it.
      try {
        await checkpoints.updateOne({ _id, position: { $lt: position } }, { $set: { position } }, { upsert: true });
      } catch (error) {
        if (!(error instanceof DuplicateKey)) throw error;
      }
    }
    this.checkpointed = Math.max(this.checkpointed, position);
  }

  /** Applies one event to every projection that handles it, then moves the checkpoint. */
  async handle(event: RecordedEvent): Promise<void> {
    await this.apply(event);
  }

  /**
   * handle(), synchronous as long as every projection applies the event synchronously (a
   * projection into the in-memory store): a promise only from the first that answers one.
   */
  private apply(event: RecordedEvent): Promise<void> | undefined {
    // Caught up: what the catch-up still holds is written before anything else is.
    if (this.caughtUp && this.replay && this.replay.pending > 0) return this.flushReplay().then(() => this.apply(event));
    const entries = this.byType.get(event.type);
    if (entries) {
      this.inEvent = true;
      for (let index = 0; index < entries.length; index++) {
        const entry = entries[index];
        if (event.position <= entry.from) continue;
        let applying: Promise<void> | void;
        try {
          applying = entry.projection.project(event, this.storeFor(entry));
        } catch (error) {
          this.inEvent = false;
          throw error;
        }
        if (applying) return this.applyLater(event, entries, index, applying);
        entry.applied += 1;
      }
      this.inEvent = false;
    }
    return this.moveOn(event);
  }

  /** The rest of apply() once a projection answered a promise: each projection in turn, awaited. */
  private async applyLater(event: RecordedEvent, entries: readonly ProjectionEntry[], index: number, applying: Promise<void>): Promise<void> {
    try {
      await applying;
      entries[index].applied += 1;
      for (const entry of entries.slice(index + 1)) {
        if (event.position <= entry.from) continue;
        await entry.projection.project(event, this.storeFor(entry));
        entry.applied += 1;
      }
    } finally {
      this.inEvent = false;
    }
    await this.moveOn(event);
  }

  /** After an event is applied: the position, the checkpoint, the log line, the observers and the waiters. */
  private moveOn(event: RecordedEvent): Promise<void> | undefined {
    // A redelivered older event never moves the checkpoint back.
    this.processed = Math.max(this.processed, event.position);
    const checkpoint = this.scheduleCheckpoint();
    if (checkpoint) return checkpoint.then(() => this.announce(event));
    if (this.replay && this.replay.pending > 0 && event.position >= this.catchUpHead) return this.writeCheckpoint().then(() => this.announce(event));
    this.announce(event);
    return undefined;
  }

  private announce(event: RecordedEvent): void {
    this.handledSinceStart += 1;
    if (this.handledSinceStart % 50000 === 0) {
      this.logger.info('projecting events', { events: this.handledSinceStart, position: event.position });
    }
    for (const observer of this.observers) observer(event, this.caughtUp);
    // Held writes: the waiters hear of the position once they are sent (flushReplay).
    if (!this.replay || this.replay.pending === 0) this.waiters.reached(event.position);
  }

  get role(): ProjectionRole {
    return this.following ? 'follower' : 'owner';
  }

  /**
   * Stops applying events without failing the requests that wait: this instance lost or handed
   * over the projection lease, and its position moves by follow() from now on. With
   * `checkpoint` (a handover) the position reached is written first; without, the next owner
   * replays from the stored checkpoints, which documents guarded by position make harmless.
   */
  async pause(checkpoint: boolean): Promise<void> {
    this.following = true;
    this.starts += 1;
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.close();
    await this.loop;
    this.loop = null;
    if (checkpoint) await this.writeCheckpoint();
    // Without a checkpoint, the next owner replays what was held, from the stored checkpoints.
    this.replay?.discard();
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = null;
    this.checkpointed = Math.max(this.checkpointed, this.processed);
    this.failure = null;
  }

  /**
   * Another instance projects into the shared read store; its checkpoints (by checkpoint id) say
   * how far the documents are. The position moves to the lowest of them and wakes the requests
   * waiting for it; a projection whose checkpoint moved counts as changed (generation). Writes
   * nothing.
   */
  follow(checkpoints: ReadonlyMap<string, number>): void {
    this.following = true;
    let lowest = Number.POSITIVE_INFINITY;
    for (const [name, entry] of this.byName) {
      const position = checkpoints.get(this.checkpointOf(name));
      if (position === undefined) continue;
      if (position > entry.from) {
        entry.from = position;
        entry.applied += 1;
      }
      lowest = Math.min(lowest, position);
    }
    if (lowest === Number.POSITIVE_INFINITY || lowest <= this.processed) return;
    this.processed = lowest;
    this.checkpointed = lowest;
    this.waiters.reached(lowest);
  }
}

export type EventObserver = (event: RecordedEvent, live: boolean) => void;
