import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import { documentProjection, Projection } from '#infrastructure/processing/projection';
import type { Document, IndexSpec, ReadStore } from '#infrastructure/read-store/read-store.port';

/**
 * A stored event of the union E: one RecordedEvent per member, so a `switch (event.type)`
 * narrows its `data` as it narrows E's, and a projection needs no cast.
 */
export type Recorded<E extends DomainEvent> = E extends DomainEvent<infer Type, infer Data> ? RecordedEvent<Type, Data> : never;

/**
 * Whether the event is one of the types listed. The type names the data's shape: the log holds
 * only events this service wrote, so the check of the type is the whole check.
 */
function isOneOf<E extends DomainEvent>(types: readonly E['type'][], event: RecordedEvent): event is Recorded<E> {
  return (types as readonly string[]).includes(event.type);
}

export interface TypedProjectionSpec<E extends DomainEvent> {
  name: string;
  /** Only members of E: the runner delivers these and no others. */
  eventTypes: readonly E['type'][];
  collections: Readonly<Record<string, IndexSpec[]>>;
  project(event: Recorded<E>, store: ReadStore): Promise<void>;
}

/** A Projection whose handler sees the union E it declares, not any RecordedEvent. */
export function typedProjection<E extends DomainEvent>(spec: TypedProjectionSpec<E>): Projection {
  return {
    name: spec.name,
    eventTypes: spec.eventTypes,
    collections: spec.collections,
    async project(event, store) {
      if (isOneOf<E>(spec.eventTypes, event)) await spec.project(event, store);
    },
  };
}

export interface TypedDocumentSpec<E extends DomainEvent, D extends Document> {
  name: string;
  collection: string;
  indexes?: IndexSpec[];
  eventTypes: readonly E['type'][];
  documentId(event: Recorded<E>): string | string[] | null;
  evolve(document: D | null, event: Recorded<E>, id: string): D | null;
}

/** documentProjection (one document per event, guarded by position), typed by the union E. */
export function typedDocumentProjection<E extends DomainEvent, D extends Document>(spec: TypedDocumentSpec<E, D>): Projection {
  const { eventTypes } = spec;
  return documentProjection<D>({
    name: spec.name,
    collection: spec.collection,
    indexes: spec.indexes,
    eventTypes,
    documentId: (event) => (isOneOf<E>(eventTypes, event) ? spec.documentId(event) : null),
    evolve: (document, event, id) => (isOneOf<E>(eventTypes, event) ? spec.evolve(document, event, id) : document),
  });
}
