/**
 * The EventStore contract on the EventStoreDB adapter over the gRPC test server
 * (test/support/eventstoredb/server.ts): the real client speaking the real protocol to a server
 * that follows EventStoreDB's rules, so that the adapter's own logic, the audit chain's included,
 * runs the whole contract on machines without a server. event-store.eventstoredb.spec.ts runs the
 * same contract against a real server when EVENTSTORE_URL is set.
 */
import { EventStoreDbEventStore } from '#infrastructure/event-store/eventstoredb/eventstoredb-event-store';
import { EventStoreDbTestServer } from '../support/eventstoredb/server';
import { eventStoreContract } from './event-store.contract';

eventStoreContract('EventStoreDB adapter over the gRPC test server', async () => {
  const server = await EventStoreDbTestServer.start();
  const store = await EventStoreDbEventStore.connect(server.url());
  return {
    store,
    reopen: () => EventStoreDbEventStore.connect(server.url()),
    cleanup: async () => {
      await store.close();
      await server.stop();
    },
  };
});
