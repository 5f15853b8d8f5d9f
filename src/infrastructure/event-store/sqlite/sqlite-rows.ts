import type { EventMetadata, RecordedEvent } from '../event-store.port';

/** A row of the SQLite log's `events` table, as the store's reads select it. */
export interface EventRow {
  position: number;
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  created_at: string;
}

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.id,
    type: row.type,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as EventMetadata,
    streamName: row.stream,
    revision: row.revision,
    position: row.position,
    createdAt: row.created_at,
  };
}
