import type { NewEvent } from '../event-store.port';

/**
 * What one event adds to an append as EventStoreDB counts it against MaxAppendSize (its data,
 * its metadata and its type, as stored), plus room for the id and content type that travel
 * with it: an estimate that errs high, so that an append it lets through is not refused.
 */
const PER_EVENT_OVERHEAD_BYTES = 128;

export function appendSize(events: readonly NewEvent[]): number {
  let bytes = 0;
  for (const event of events) {
    bytes += Buffer.byteLength(JSON.stringify(event.data ?? null));
    bytes += Buffer.byteLength(JSON.stringify(event.metadata));
    bytes += 2 * Buffer.byteLength(event.type) + PER_EVENT_OVERHEAD_BYTES;
  }
  return bytes;
}
