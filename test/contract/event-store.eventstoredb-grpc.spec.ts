/**
 * The EventStore contract on the EventStoreDB adapter over a stubbed server
 * (test/support/stub-eventstoredb.ts), so that the adapter's own logic, the audit chain's
 * included, runs the whole contract on machines without a server. The stub keeps the server's
 * rules as the client reports them; event-store.eventstoredb.spec.ts runs the same contract
 * against a real server when EVENTSTORE_URL is set.
 */
import { eventStoreContract } from './event-store.contract';
import { EventStoreDbEventStore } from '#infrastructure/event-store/eventstoredb/eventstoredb-event-store';
import { StubEventStoreDb } from '../support/stub-eventstoredb';

eventStoreContract('EventStoreDB adapter over a stubbed server', async () => {
  const server = new StubEventStoreDb();
  const store = EventStoreDbEventStore.over(server.client());
  return {
    store,
    reopen: async () => EventStoreDbEventStore.over(server.client()),
    cleanup: () => store.close(),
  };
});
