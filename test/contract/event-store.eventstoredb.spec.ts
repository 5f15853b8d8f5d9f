import { eventStoreContract } from './event-store.contract';
import { EventStoreDbEventStore } from '#infrastructure/event-store/eventstoredb/eventstoredb-event-store';

const url = process.env.EVENTSTORE_URL;

if (url) {
  eventStoreContract('EventStoreDB', async () => {
    const store = await EventStoreDbEventStore.connect(url);
    return {
      store,
      reopen: () => EventStoreDbEventStore.connect(url),
      cleanup: () => store.close(),
    };
  });
} else {
  describe('EventStore contract: EventStoreDB', () => {
    process.stderr.write(
      'EventStoreDB contract skipped: EVENTSTORE_URL is not set (e.g. esdb://localhost:2113?tls=false with docker compose -f docker-compose.yml -f docker-compose.contract.yml up -d eventstore).\n',
    );
    it.skip('needs a running EventStoreDB (set EVENTSTORE_URL)', () => undefined);
  });
}
