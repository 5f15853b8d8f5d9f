import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { toDomainEvent } from '#infrastructure/event-store/stream-command';
import { foldEvents } from '#shared/decider';
import { environmentDecider, EnvironmentState } from './environment.decider';
import { EnvironmentEvent, environmentStream } from './environment.events';

/** The organization's variables as its stream leaves them, sealed values included. */
export async function readEnvironment(eventStore: EventStore, organization: string): Promise<EnvironmentState> {
  const events = await eventStore.readStream(environmentStream(organization));
  return foldEvents(environmentDecider, events.map(toDomainEvent) as EnvironmentEvent[]);
}
