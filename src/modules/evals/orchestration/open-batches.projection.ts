import { CHECKPOINTS, ProjectionRunner } from '#infrastructure/processing/projection-runner';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { typedDocumentProjection } from '../../typed-projection';
import type { BatchSlotReleased, BatchSlotTaken } from '../batches/batch-slots.decider';
import type { BatchFailed, BatchFinished, BatchStarted } from '../batches/batch.events';

export const OPEN_BATCHES = 'eval_open_batches';

/**
 * A batch the saga still has work for: its start holds a slot and has not recorded the batch
 * yet, or it started and is not ended, or it ended without its slot given back. Where the saga's
 * state of it begins in the log: its slot's BatchSlotTaken, or its BatchStarted for a batch
 * recorded before slots were followed here.
 */
export type OpenBatchDocument = {
  _id: string;
  startedAtPosition: number;
  /** False while only its slot is taken; absent (started) in documents written before slots were followed. */
  started?: boolean;
  ended: boolean;
  slotReleased: boolean;
};

/** The document while something is left to do for the batch; none once it ended and gave its slot back. */
function open(document: OpenBatchDocument): OpenBatchDocument | null {
  return document.ended && document.slotReleased ? null : document;
}

/**
 * The batches the trial saga has not finished with. A batch that ended and gave back its slot
 * needs nothing more (the saga forgets it), so the saga's catch-up at start can begin at the
 * oldest open batch's start instead of at the beginning of the log.
 */
export const openBatchesProjection = typedDocumentProjection<
  BatchSlotTaken | BatchStarted | BatchFinished | BatchFailed | BatchSlotReleased,
  OpenBatchDocument
>({
  name: 'open-batches',
  collection: OPEN_BATCHES,
  indexes: [{ keys: { startedAtPosition: 1 } }],
  eventTypes: ['BatchSlotTaken', 'BatchStarted', 'BatchFinished', 'BatchFailed', 'BatchSlotReleased'],
  documentId: (event) => event.data.batchId,
  evolve(document, event, id) {
    switch (event.type) {
      case 'BatchSlotTaken':
        return document ?? { _id: id, startedAtPosition: event.position, started: false, ended: false, slotReleased: false };
      case 'BatchStarted':
        return { _id: id, startedAtPosition: document?.startedAtPosition ?? event.position, started: true, ended: false, slotReleased: false };
      case 'BatchFinished':
      case 'BatchFailed':
        return document && open({ ...document, ended: true });
      case 'BatchSlotReleased':
        // A start that failed or died gives its slot back without a BatchStarted: nothing to follow.
        if (document?.started === false) return null;
        return document && open({ ...document, slotReleased: true });
    }
  },
});

/**
 * The position after which the saga's catch-up may start: every batch still open began after
 * it. The checkpoint is read before the documents: they reflect at least the events up to it
 * (a checkpoint is written after what it covers), and a batch started after it is read from the
 * log anyway. -1 (the whole log) before the projection has a checkpoint.
 */
export async function sagaCatchUpAfter(readStore: ReadStore, projections: ProjectionRunner): Promise<number> {
  const checkpoint = await readStore
    .collection<{ _id: string; position: number }>(CHECKPOINTS)
    .findOne({ _id: projections.checkpointOf(openBatchesProjection.name) });
  if (!checkpoint) return -1;
  // A range on the index: the tombstones of closed batches (projection.ts) have no startedAtPosition,
  // are indexed as null, and stay outside it however many there are.
  const open = { startedAtPosition: { $gte: 0 } };
  const oldest = (await readStore.collection<OpenBatchDocument>(OPEN_BATCHES).find(open, { sort: { startedAtPosition: 1 }, limit: 1 })).at(0);
  return oldest ? Math.min(checkpoint.position, oldest.startedAtPosition - 1) : checkpoint.position;
}
