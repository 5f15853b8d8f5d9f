/**
 * /ready with an EventStoreDB whose subscription is down: the real adapter and client, aimed at a
 * port where no server listens (connections are refused at once), so the subscription drops and
 * keeps resubscribing, and readiness says so instead of staying green.
 */
import * as net from 'node:net';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { JsonLogger } from '../../logging/json-logger';
import { ProjectionRunner } from '../../processing/projection-runner';
import { PositionTrackingEventStore, WriteTracker } from '../../processing/read-your-writes';
import { MemoryReadStore } from '../../read-store/memory/memory-read-store';
import { HealthController } from '#modules/operations/health.controller';
import { replyRecorder } from '../../../../test/support/reply-recorder';

/** A local port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('readiness while the EventStoreDB subscription is down', () => {
  it('answers 503 with why, and the subscription still ends at once on close', async () => {
    const drops: string[] = [];
    const adapter = await EventStoreDbEventStore.connect(`esdb://127.0.0.1:${await closedPort()}?tls=false`, {
      resume: { initialDelayMs: 50, maxDelayMs: 200, onDrop: (reason) => drops.push(reason) },
    });
    const eventStore = new PositionTrackingEventStore(adapter, new WriteTracker());
    const readStore = new MemoryReadStore();
    const health = new HealthController(eventStore, readStore, new ProjectionRunner(eventStore, readStore, [], new JsonLogger('silent')));
    try {
      const subscription = eventStore.subscribeToAll();
      const pending = subscription[Symbol.asyncIterator]().next();
      const deadline = Date.now() + 20_000;
      while (drops.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(drops.length).toBeGreaterThanOrEqual(2);
      expect(eventStore.subscriptionFault()).toContain('resubscribing from the start of the log');
      const { answer, reply } = replyRecorder();
      await health.ready(reply);
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ status: 'not_ready', reason: expect.stringContaining('the subscription to the event log dropped') });
      await subscription.close();
      expect(await pending).toEqual({ done: true, value: undefined });
      expect(eventStore.subscriptionFault()).toBeNull();
    } finally {
      await eventStore.close();
    }
  }, 30_000);
});
