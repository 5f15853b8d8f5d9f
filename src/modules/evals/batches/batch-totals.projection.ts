import { typedDocumentProjection } from '../../typed-projection';
import type { BatchStarted } from './batch.events';

export const BATCH_TOTALS = 'eval_batch_totals';

/**
 * How many batches an organization has started, in all or of one suite: the `total` of
 * evals.batches.list, read as one document instead of counted over the batches at every page.
 * Batches are never deleted, so a count only grows, by one at each BatchStarted.
 */
export type BatchTotalDocument = {
  _id: string;
  organization: string;
  suiteId: string | null;
  batches: number;
};

/** The organization's total, or one suite's of it. */
export function batchTotalId(organization: string, suite: string | null): string {
  return JSON.stringify(suite === null ? [organization] : [organization, suite]);
}

export const batchTotalsProjection = typedDocumentProjection<BatchStarted, BatchTotalDocument>({
  name: 'eval-batch-totals',
  collection: BATCH_TOTALS,
  eventTypes: ['BatchStarted'],
  documentId: ({ data }) => [batchTotalId(data.organization, null), batchTotalId(data.organization, data.suite.id)],
  evolve(document, { data }, id) {
    const suiteId = id === batchTotalId(data.organization, null) ? null : data.suite.id;
    return { _id: id, organization: data.organization, suiteId, batches: (document?.batches ?? 0) + 1 };
  },
});
