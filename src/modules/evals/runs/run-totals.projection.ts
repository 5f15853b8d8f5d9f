import type { BatchStarted } from '../batches/batch.events';
import { typedDocumentProjection } from '../../typed-projection';

export const RUN_TOTALS = 'eval_run_totals';

/**
 * How many runs a case has, in all or on one variant: the `total` of evals.runs.list, read as
 * one document instead of counted over the case's runs at every page. Runs are never deleted,
 * and only a BatchStarted plans them.
 */
export type RunTotalDocument = {
  _id: string;
  organization: string;
  caseId: string;
  variantId: string | null;
  runs: number;
};

/** The case's total, or one variant's of it. */
export function runTotalId(organization: string, caseId: string, variantId: string | null): string {
  return JSON.stringify(variantId === null ? [organization, caseId] : [organization, caseId, variantId]);
}

export const runTotalsProjection = typedDocumentProjection<BatchStarted, RunTotalDocument>({
  name: 'eval-run-totals',
  collection: RUN_TOTALS,
  eventTypes: ['BatchStarted'],
  documentId({ data }) {
    const ids = data.runs.flatMap((run) => [runTotalId(data.organization, run.caseId, null), runTotalId(data.organization, run.caseId, run.variantId)]);
    return [...new Set(ids)];
  },
  evolve(document, { data }, id) {
    const [organization, caseId, variantId = null] = JSON.parse(id) as [string, string, string?];
    const planned = data.runs.filter((run) => run.caseId === caseId && (variantId === null || run.variantId === variantId)).length;
    return { _id: id, organization, caseId, variantId, runs: (document?.runs ?? 0) + planned };
  },
});
