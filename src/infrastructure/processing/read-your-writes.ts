import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  AllSubscription,
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
} from '../event-store/event-store.port';

/** What one HTTP command appended: the position its answer must wait for. */
export interface WriteScope {
  lastPosition: number;
}

const scopes = new AsyncLocalStorage<WriteScope>();

/** Runs `work` in a fresh write scope and returns its result with the last appended position. */
export async function withWriteScope<T>(work: () => Promise<T>): Promise<{ result: T; lastPosition: number }> {
  const scope: WriteScope = { lastPosition: -1 };
  const result = await scopes.run(scope, work);
  return { result, lastPosition: scope.lastPosition };
}

/**
 * An EventStore decorator that notes, in the current request's write scope, the position of
 * every append, so the HTTP layer can hold the answer until the read models reflect it.
 */
export class PositionTrackingEventStore implements EventStore {
  constructor(private readonly inner: EventStore) {}

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const result = await this.inner.append(stream, events, expected);
    const scope = scopes.getStore();
    if (scope && result.position > scope.lastPosition) scope.lastPosition = result.position;
    return result;
  }

  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, options);
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
