import type { RecordedEvent } from '../event-store/event-store.port';
import { Collection, Document, DuplicateKey, Filter, IndexSpec, ReadStore } from '../read-store/read-store.port';

/** The field in which every read-model document records the log position it reflects. */
export const POSITION_FIELD = '_position';

export interface ProjectedDocument extends Document {
  _position: number;
}

/**
 * What a guarded write leaves of a deleted document: its `_id` and the position of the event
 * that deleted it. Without it, a lapsed owner whose write of an older event was in flight would
 * find nothing there and insert the document again; with it, that write names a position the
 * tombstone has moved past, and is refused. A tombstone has no field a read filters on but
 * `_id`: a read of a collection whose projection deletes names another field, or excludes
 * tombstones (`LIVE`). The in-memory store, which reads and writes in one step, deletes outright.
 */
export interface Tombstone extends ProjectedDocument {
  _deleted: true;
}

export function tombstone(id: string, position: number): Tombstone {
  return { _id: id, _position: position, _deleted: true };
}

export function isTombstone(document: Document | null): document is Tombstone {
  return document !== null && document._deleted === true;
}

/** The documents that are not tombstones, for a read that names no field a tombstone lacks. */
export const LIVE: Filter = { _deleted: { $exists: false } };

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
  /** Nothing to wait for (undefined) when it applied the event synchronously, as into the in-memory store. */
  project(event: RecordedEvent, store: ReadStore): Promise<void> | void;
}

export interface DocumentProjectionSpec<D extends Document> {
  name: string;
  collection: string;
  indexes?: IndexSpec[];
  eventTypes: readonly string[];
  /** Which document an event changes (or several, for an event that creates many); null for none. */
  documentId(event: RecordedEvent): string | string[] | null;
  /**
   * `(document | null, event) → document | null`: null deletes the document (leaving a tombstone
   * where the store reads, then writes; evolve sees null for it). A pure function: it
   * never changes `document` (the in-memory store hands over its stored object) nor the event,
   * and answers `document` itself when nothing changes, or a new object of its own making
   * (spreading `document` shares what did not change), which the projection then completes with
   * `_id` and `_position`.
   */
  evolve(document: D | null, event: RecordedEvent, id: string): D | null;
}

/**
 * The common case: each event changes at most one document. The position guard makes
 * redelivery harmless: an event at or before the document's position is skipped.
 */
export function documentProjection<D extends Document>(spec: DocumentProjectionSpec<D>): Projection {
  const inStep = evolveInStep(spec);
  return {
    name: spec.name,
    eventTypes: spec.eventTypes,
    collections: { [spec.collection]: spec.indexes ?? [] },
    project(event, store) {
      const ids = spec.documentId(event);
      if (ids === null) return;
      const collection = store.collection<D & ProjectedDocument>(spec.collection);
      if (!collection.evolveOne) return projectEach(collection, Array.isArray(ids) ? ids : [ids], event, spec);
      if (typeof ids === 'string') collection.evolveOne(ids, event, inStep);
      else for (const id of ids) collection.evolveOne(id, event, inStep);
    },
  };
}

async function projectEach<D extends Document>(
  collection: Collection<D & ProjectedDocument>,
  ids: readonly string[],
  event: RecordedEvent,
  spec: DocumentProjectionSpec<D>,
): Promise<void> {
  for (const id of ids) await projectOne(collection, id, event, spec);
}

/**
 * projectOne for a store that reads and writes in one step (the in-memory store): nothing can
 * write between the read and the write, so the position check needs no guard in the write, and
 * no document is copied: evolve is pure, and its answer becomes the store's. One function per
 * projection, given the event as its context: nothing is allocated per event for it.
 */
function evolveInStep<D extends Document>(spec: DocumentProjectionSpec<D>) {
  return (current: (D & ProjectedDocument) | null, id: string, event: RecordedEvent): (D & ProjectedDocument) | null | undefined => {
    if (current && current._position >= event.position) return undefined;
    const next = spec.evolve(current, event, id);
    if (next === null) return null;
    // The stored document handed back unchanged is copied (Object.assign: the same keys in the
    // same order as a spread, and several times faster in V8); a new one is evolve's own, and is
    // completed where it is (the same keys in the same order again), once per event of a replay.
    if (next === current) return Object.assign({}, current, { _position: event.position });
    const completed = next as D & ProjectedDocument;
    completed._id = id;
    completed._position = event.position;
    return completed;
  };
}

/** Attempts at a guarded write before giving up: each retry follows a write by another projector. */
export const GUARDED_ATTEMPTS = 20;

/**
 * Applies one event to one document with a guarded write: the write names the position it was
 * computed from (`{_id, _position: read}`), or inserts where nothing was, so that when another
 * projector wrote the document in between, nothing is written and the event is applied again to
 * what is there now, or skipped when that already reflects it. Two projectors of one log thus
 * end in the same documents, whatever their interleaving.
 */
async function projectOne<D extends Document>(
  collection: Collection<D & ProjectedDocument>,
  id: string,
  event: RecordedEvent,
  spec: DocumentProjectionSpec<D>,
): Promise<void> {
  for (let attempt = 0; attempt < GUARDED_ATTEMPTS; attempt++) {
    const current = await collection.findOne({ _id: id });
    if (current && current._position >= event.position) return;
    const read = current?._position;
    // The stored `_position` rides along into evolve and is overwritten below: no copy needed.
    const next = spec.evolve(isTombstone(current) ? null : current, event, id);
    if (next === null && (current === null || isTombstone(current))) return;
    const written = next === null ? tombstone(id, event.position) : { ...next, _id: id, _position: event.position };
    if (await writeGuarded(collection, id, read, written)) return;
  }
  throw new Error(`Projection ${spec.name}: document ${id} kept changing under event ${event.position}; another projector is writing it.`);
}

/**
 * One document of a hand-written projection, changed by `next` with the guard documentProjection
 * uses: the write names the `_position` it read (or inserts where nothing was), and when another
 * writer changed the document in between (a lapsed owner's late write, or the new owner's), the
 * document is read again and `next` asked again, so neither writer undoes the other. `next`
 * answers the new document (with its `_position`), or undefined for no change; it sees
 * `_position`, and skips an event the document already reflects. A store that reads and writes
 * in one step (the in-memory one) hands its own document over. For a projection that deletes
 * documents: evolveGuardedDeleting.
 */
export function evolveGuarded<T extends ProjectedDocument>(collection: Collection<T>, id: string, next: (current: T | null) => T | undefined): Promise<void> {
  // No tombstone is ever written here, so none is ever read.
  return evolveGuardedDeleting(collection, id, next as (current: T | Tombstone | null) => T | undefined);
}

/**
 * evolveGuarded for a projection that deletes: `next` answers a tombstone to delete the document,
 * and sees the tombstones of deleted ones (with the position that deleted them). The in-memory
 * store deletes outright.
 */
export async function evolveGuardedDeleting<T extends ProjectedDocument>(
  collection: Collection<T>,
  id: string,
  next: (current: T | Tombstone | null) => T | Tombstone | undefined,
): Promise<void> {
  if (collection.evolveOne) {
    collection.evolveOne(id, null, (current) => {
      const written = next(current);
      return written !== undefined && isTombstone(written) ? null : written;
    });
    return;
  }
  for (let attempt = 0; attempt < GUARDED_ATTEMPTS; attempt++) {
    const current = await collection.findOne({ _id: id });
    const written = next(current);
    if (written === undefined) return;
    if (await writeGuarded(collection, id, current?._position, written)) return;
  }
  throw new Error(`Document ${id} of ${collection.name} kept changing under its projection; another projector is writing it.`);
}

/**
 * True when the write happened: the document (or its tombstone) was still at `read` (absent
 * when undefined). A deletion writes a tombstone, so that it keeps its position.
 */
export async function writeGuarded<D extends ProjectedDocument>(
  collection: Collection<D>,
  id: string,
  read: number | undefined,
  next: D | Tombstone,
): Promise<boolean> {
  const written = next as D;
  if (read !== undefined) return (await collection.replaceOne({ _id: id, _position: read }, written)).matchedCount === 1;
  try {
    await collection.insertOne(written);
    return true;
  } catch (error) {
    // Another projector inserted it first; a duplicate of another unique key is a real error.
    if (error instanceof DuplicateKey && (await collection.findOne({ _id: id })) !== null) return false;
    throw error;
  }
}
