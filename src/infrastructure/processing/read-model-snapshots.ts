/**
 * Read-model snapshots of the embedded store: loaded at start so that only the log's tail is
 * replayed, written every `every` events while serving (or less often for a large state, see
 * snapshotInterval) and once more at shutdown. The capture
 * is taken between two events (the runner's observer, or while it is idle) and written to disk
 * through the event loop in chunks, so requests are served while a snapshot is written.
 */
import type { EventStore } from '../event-store/event-store.port';
import type { JsonLogger } from '../logging/json-logger';
import { CapturedCollection, MemoryReadStore } from '../read-store/memory/memory-read-store';
import { readSnapshot, UnusableSnapshot, writeSnapshot } from '../read-store/memory/read-model-snapshot';
import { CHECKPOINTS, ProjectionRunner } from './projection-runner';

export interface SnapshotSettings {
  file: string;
  /** Events between two snapshots while serving; 0 turns snapshots off. */
  every: number;
  /** What built the documents: a snapshot written by other projections is not loaded. */
  fingerprint: string;
}

/** Documents written per event applied, at most, on average: a larger state is written less often. */
export const SNAPSHOT_DOCUMENTS_PER_EVENT = 10;

/**
 * Events between two snapshots: `every`, or more when the state is large, so that writing the
 * snapshots costs each event at most SNAPSHOT_DOCUMENTS_PER_EVENT documents however long the
 * history grows (at a fixed interval, a snapshot of N documents every `every` events costs each
 * event N / every). The tail a restart replays after a crash then grows with the state, as
 * loading the snapshot itself does.
 */
export function snapshotInterval(every: number, documents: number): number {
  return Math.max(every, Math.ceil(documents / SNAPSHOT_DOCUMENTS_PER_EVENT));
}

export class ReadModelSnapshots {
  private lastEvent: { position: number; id: string } | null = null;
  private snapshotPosition = -1;
  /** The documents of the last snapshot taken or loaded. */
  private documents = 0;
  private writing: Promise<void> | null = null;
  /** Set when a snapshot is due while an event is being applied: taken after it. */
  private due = false;
  private stopped = false;

  constructor(
    private readonly settings: SnapshotSettings,
    private readonly store: MemoryReadStore,
    private readonly runner: ProjectionRunner,
    private readonly logger: JsonLogger,
  ) {
    runner.observe((event, live) => {
      this.lastEvent = { position: event.position, id: event.id };
      if (this.settings.every === 0 || this.stopped || !live || this.writing) return;
      if (this.due || event.position - this.snapshotPosition >= this.interval()) this.take();
    });
  }

  /**
   * Before the runner starts: loads the newest valid snapshot into the (empty) store. A missing
   * one is normal; an unusable one is logged and the runner replays the whole log.
   */
  async load(eventStore: EventStore): Promise<void> {
    if (this.settings.every === 0) return;
    const started = Date.now();
    try {
      const loaded = await readSnapshot(this.settings.file, this.settings.fingerprint);
      if (loaded === null) return;
      const atPosition = (await eventStore.readAll({ after: loaded.position - 1, maxCount: 1 })).at(0);
      if (atPosition?.position !== loaded.position || atPosition.id !== loaded.eventId) {
        throw new UnusableSnapshot(`of another event log: position ${loaded.position} does not hold event ${loaded.eventId}`);
      }
      this.store.restore(loaded.collections);
      this.snapshotPosition = loaded.position;
      this.documents = documentCount(loaded.collections);
      this.lastEvent = { position: loaded.position, id: loaded.eventId };
      this.logger.info('read models loaded from a snapshot', {
        file: this.settings.file,
        position: loaded.position,
        documents: this.documents,
        bytes: loaded.bytes,
        durationMs: Date.now() - started,
      });
    } catch (error) {
      if (!(error instanceof UnusableSnapshot)) throw error;
      this.logger.warn('read-model snapshot ignored; replaying the whole event log', { file: this.settings.file, reason: error.message });
    }
  }

  /** After the runner caught up: a snapshot now when the replay was long, so the next start is short. */
  afterCatchUp(): void {
    if (this.settings.every > 0 && this.runner.position - this.snapshotPosition >= this.interval()) this.request();
  }

  /** At shutdown, after the runner stopped: the last snapshot, if anything changed since the one before. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.writing;
    if (this.settings.every === 0 || this.runner.position <= this.snapshotPosition) return;
    this.take();
    await this.writing;
  }

  /** Takes a snapshot now if the runner is between events, else right after the event it is applying. */
  private request(): void {
    if (this.runner.applying) this.due = true;
    else this.take();
  }

  private interval(): number {
    return snapshotInterval(this.settings.every, this.documents);
  }

  private take(): void {
    const event = this.lastEvent;
    if (event === null || event.position !== this.runner.position) return;
    this.due = false;
    const collections = atPosition(this.store.capture(), this.runner, event.position);
    const documents = documentCount(collections);
    const started = Date.now();
    this.writing = writeSnapshot(this.settings.file, { position: event.position, eventId: event.id, fingerprint: this.settings.fingerprint }, collections)
      .then((bytes) => {
        this.snapshotPosition = event.position;
        this.documents = documents;
        this.logger.info('read-model snapshot written', {
          position: event.position,
          documents,
          bytes,
          durationMs: Date.now() - started,
          nextAfterEvents: this.interval(),
        });
      })
      .catch((error: unknown) => this.logger.warn('read-model snapshot failed', { error: error instanceof Error ? error.message : String(error) }))
      .finally(() => (this.writing = null));
  }
}

/**
 * The captured checkpoints say `position`: the capture reflects every event up to it, while the
 * stored checkpoint documents may lag (they are written every few hundred events).
 */
function atPosition(collections: CapturedCollection[], runner: ProjectionRunner, position: number): CapturedCollection[] {
  return collections.map((collection) => {
    if (collection.name !== CHECKPOINTS) return collection;
    const own = new Set(runner.checkpointIds());
    const others = collection.documents.filter((doc) => !own.has(doc._id));
    return { ...collection, documents: [...others, ...[...own].map((_id) => ({ _id, position }))] };
  });
}

function documentCount(collections: ReadonlyArray<{ documents: readonly unknown[] }>): number {
  return collections.reduce((sum, { documents }) => sum + documents.length, 0);
}
