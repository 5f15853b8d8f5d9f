/**
 * EventStoreDB refuses an append above its MaxAppendSize (1 MiB by default). The adapter refuses
 * it first, with the typed AppendTooLarge, before any network call (the server here is a port
 * where nothing listens), and the HTTP layer answers it as a 400 in the spec's shape.
 */
import { randomUUID } from 'node:crypto';
import { AppendTooLarge, NewEvent } from '../event-store.port';
import { appendSize } from './append-size';
import { DEFAULT_MAX_APPEND_BYTES, EventStoreDbEventStore } from './eventstoredb-event-store';
import { mapError } from '../../http/error-mapping';

const metadata = { organization: 'org', actor: 'system:test', correlationId: 'c', causationId: 'c' };

/** An event of about `bytes` bytes of data, in characters of two UTF-8 bytes each. */
function eventOf(bytes: number): NewEvent {
  return { id: randomUUID(), type: 'BatchStarted', data: { source: 'é'.repeat(bytes / 2) }, metadata };
}

describe('the EventStoreDB append limit', () => {
  it('counts data and metadata in UTF-8 bytes, never less than the JSON the client sends', () => {
    const event = eventOf(10_000);
    expect(appendSize([event])).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(event.data)) + Buffer.byteLength(JSON.stringify(event.metadata)));
    expect(appendSize([event, event])).toBe(2 * appendSize([event]));
  });

  it('refuses an append over the limit with AppendTooLarge, without reaching the server, and takes one under it to the server', async () => {
    const store = await EventStoreDbEventStore.connect('esdb://127.0.0.1:1?tls=false&defaultDeadline=2000');
    try {
      // 1.2 MB in 600,000 characters: the limit is in bytes.
      const refusal = await store.append('batch-1', [eventOf(1_200_000)], 'no_stream').catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(AppendTooLarge);
      expect(refusal).toMatchObject({ stream: 'batch-1', limit: DEFAULT_MAX_APPEND_BYTES });
      expect((refusal as AppendTooLarge).bytes).toBeGreaterThan(DEFAULT_MAX_APPEND_BYTES);
      // Just under the limit goes to the server, which is not there: a different error.
      const unreachable = await store.append('batch-1', [eventOf(1_000_000)], 'no_stream').catch((error: unknown) => error);
      expect(unreachable).not.toBeInstanceOf(AppendTooLarge);
      expect(unreachable).toBeInstanceOf(Error);
    } finally {
      await store.close();
    }
  }, 30_000);

  it('is answered as a 400 that names the limit and what to change', () => {
    const mapped = mapError(new AppendTooLarge('batch-1', 2_000_000, DEFAULT_MAX_APPEND_BYTES), 'POST', '/v1/evals.batches.start');
    expect(mapped.status).toBe(400);
    expect(mapped.unexpected).toBe(false);
    expect(mapped.body._tag).toBe('BadRequest');
    expect(mapped.body.message).toContain('1048576');
    expect(mapped.body.message).toContain('MaxAppendSize');
  });
});
