import { CHECKPOINTS, ProjectionRunner } from '#infrastructure/processing/projection-runner';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { typedDocumentProjection } from '../../typed-projection';
import type { BatchSlotReleased } from '../batches/batch-slots.decider';
import type { BatchFailed, BatchFinished, BatchStarted } from '../batches/batch.events';

export const OPEN_BATCHES = 'eval_open_batches';

/**
 * A batch the saga still has work for: not ended, or ended without its slot given back. Where
 * its BatchStarted is in the log: the saga's state of it is built from that event on.
 */
export type OpenBatchDocument = {
  _id: string;
  startedAtPosition: number;
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
export const openBatchesProjection = typedDocumentProjection<BatchStarted | BatchFinished | BatchFailed | BatchSlotReleased, OpenBatchDocument>({
  name: 'open-batches',
  collection: OPEN_BATCHES,
  indexes: [{ keys: { startedAtPosition: 1 } }],
  eventTypes: ['BatchStarted', 'BatchFinished', 'BatchFailed', 'BatchSlotReleased'],
  documentId: (event) => event.data.batchId,
  evolve(document, event, id) {
    switch (event.type) {
      case 'BatchStarted':
        return { _id: id, startedAtPosition: event.position, ended: false, slotReleased: false };
      case 'BatchFinished':
      case 'BatchFailed':
        return document && open({ ...document, ended: true });
      case 'BatchSlotReleased':
        // A start that failed gives its slot back without a BatchStarted: nothing to follow.
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
  const oldest = (await readStore.collection<OpenBatchDocument>(OPEN_BATCHES).find({}, { sort: { startedAtPosition: 1 }, limit: 1 })).at(0);
  return oldest ? Math.min(checkpoint.position, oldest.startedAtPosition - 1) : checkpoint.position;
}
