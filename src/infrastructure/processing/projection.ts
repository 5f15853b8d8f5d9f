import type { RecordedEvent } from '../event-store/event-store.port';
import type { Collection, Document, IndexSpec, ReadStore } from '../read-store/read-store.port';

/** The field in which every read-model document records the log position it reflects. */
export const POSITION_FIELD = '_position';

export interface ProjectedDocument extends Document {
  _position: number;
}

/**
 * A projection keeps read models up to date from the event log. It must be idempotent
 * (a redelivered event changes nothing) and deterministic (a replay gives the same documents).
 */
export interface Projection {
  readonly name: string;
  /** The event types it reacts to; others never reach it. */
  readonly eventTypes: readonly string[];
  /** Collections it writes, with the indexes its queries need. */
  readonly collections: Readonly<Record<string, IndexSpec[]>>;
  project(event: RecordedEvent, store: ReadStore): Promise<void>;
}

export interface DocumentProjectionSpec<D extends Document> {
  name: string;
  collection: string;
  indexes?: IndexSpec[];
  eventTypes: readonly string[];
  /** Which document an event changes (or several, for an event that creates many); null for none. */
  documentId(event: RecordedEvent): string | string[] | null;
  /** `(document | null, event) → document | null`: null deletes the document. */
  evolve(document: D | null, event: RecordedEvent, id: string): D | null;
}

/**
 * The common case: each event changes at most one document. The position guard makes
 * redelivery harmless: an event at or before the document's position is skipped.
 */
export function documentProjection<D extends Document>(spec: DocumentProjectionSpec<D>): Projection {
  return {
    name: spec.name,
    eventTypes: spec.eventTypes,
    collections: { [spec.collection]: spec.indexes ?? [] },
    async project(event, store) {
      const ids = spec.documentId(event);
      if (ids === null) return;
      const collection = store.collection<D & ProjectedDocument>(spec.collection);
      for (const id of Array.isArray(ids) ? ids : [ids]) await projectOne(collection, id, event, spec);
    },
  };
}

async function projectOne<D extends Document>(
  collection: Collection<D & ProjectedDocument>,
  id: string,
  event: RecordedEvent,
  spec: DocumentProjectionSpec<D>,
): Promise<void> {
  const current = await collection.findOne({ _id: id });
  if (current && current._position >= event.position) return;
  // The stored `_position` rides along into evolve and is overwritten below: no copy needed.
  const next = spec.evolve(current, event, id);
  if (next === null) {
    await collection.deleteOne({ _id: id });
    return;
  }
  const document = { ...next, _id: id, _position: event.position } as D & ProjectedDocument;
  await collection.replaceOne({ _id: id }, document, { upsert: true });
}
