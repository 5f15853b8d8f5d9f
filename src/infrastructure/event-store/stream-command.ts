import { Decider, foldEvents } from '#shared/decider';
import type { DomainEvent } from '#shared/domain-event';
import { Conflict } from '#shared/errors';
import { derivedEventId, newEventId } from '#shared/ids';
import { AppendResult, EventMetadata, EventStore, ExpectedRevision, RecordedEvent, WrongExpectedVersion } from './event-store.port';

export type { DomainEvent } from '#shared/domain-event';

export interface StreamCommandResult<Event> {
  /** The events this command appended (empty when the decision was already in the stream). */
  events: Event[];
  append: AppendResult | null;
}

export interface StreamCommandOptions {
  /** Attempts on a concurrent write before giving up with 409 Conflict. */
  attempts?: number;
  /** Derives event ids from this key, so retrying the same command appends nothing new. */
  idempotencyKey?: string;
}

/**
 * The handler's loop: read the stream, fold it, decide, and append with the revision read
 * (`no_stream` for a new stream). On a concurrent write it re-reads and decides again.
 */
export async function executeOnStream<Command, State, Event extends DomainEvent>(
  eventStore: EventStore,
  stream: string,
  decider: Decider<Command, State, Event>,
  command: Command,
  metadata: EventMetadata,
  options: StreamCommandOptions = {},
): Promise<StreamCommandResult<Event>> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt += 1) {
    const recorded = await eventStore.readStream(stream);
    const state = foldEvents(decider, recorded.map(toDomainEvent) as Event[]);
    const events = decider.decide(command, state);
    if (events.length === 0) return { events, append: null };
    const expected: ExpectedRevision = recorded.length === 0 ? 'no_stream' : recorded[recorded.length - 1].revision;
    const toAppend = events.map((event, index) => ({
      id: options.idempotencyKey ? derivedEventId(stream, options.idempotencyKey, String(index)) : newEventId(),
      type: event.type,
      data: event.data,
      metadata,
    }));
    try {
      return { events, append: await eventStore.append(stream, toAppend, expected) };
    } catch (error) {
      if (!(error instanceof WrongExpectedVersion)) throw error;
      if (attempt >= attempts) {
        throw new Conflict(`"${stream}" is being changed by another request at the same time. Retry.`);
      }
    }
  }
}

export function toDomainEvent(event: RecordedEvent): DomainEvent {
  return { type: event.type, data: event.data };
}
