import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { afterCursor, clampLimit, Cursor, pageOf, sortOf } from '../../shared/cursor';
import { BATCHES, BatchDocument } from '../batch.projection';
import { BATCH_TOTALS, BatchTotalDocument, batchTotalId } from '../batch-totals.projection';
import { ListBatches } from './list-batches.query';

/** The batch summary (list form) of the spec. */
export interface BatchSummary {
  id: string;
  status: BatchDocument['status'];
  startedAt: string;
  finishedAt: string | null;
  failure: string | null;
  cases: number;
  runs: number;
  scored: number;
  passed: number;
  voided: number;
  trigger: BatchDocument['trigger'];
  /** The suite the batch ran: its id and its name as started. */
  suite: { id: string; name: string };
}

export interface BatchList {
  batches: BatchSummary[];
  next: Cursor | null;
  total: number;
}

/** Newest first: startedAt, then id, both descending (the index batchProjection declares). */
export const BATCH_ORDER = [
  { field: 'startedAtMillis', direction: -1 },
  { field: '_id', direction: -1 },
] as const;

export function batchSummary(batch: BatchDocument): BatchSummary {
  const { _id, status, startedAt, finishedAt, failure, cases, runs, scored, passed, voided, trigger, suiteId } = batch;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- batch documents stored before suiteName was projected have none
  const suite = { id: suiteId, name: batch.suiteName ?? suiteId };
  return { id: _id, status, startedAt, finishedAt, failure, cases, runs, scored, passed, voided, trigger, suite };
}

export const batchCursor = (batch: BatchDocument): Cursor => ({
  id: batch._id,
  startedAtMillis: batch.startedAtMillis,
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- batch documents stored before suiteName was projected have none
  name: batch.suiteName ?? batch.suiteId,
});

/** Which batches a list reads: the organization's, or one suite's of it. */
const batchScope = (organization: string, suite: string | null) => (suite === null ? { organization } : { organization, suiteId: suite });

/** The filter and options of one page: what the handler and the benchmark's bare route both run. */
export function batchPageQuery(organization: string, cursor: Cursor | null, limit: number, suite: string | null = null) {
  const after = cursor
    ? afterCursor([
        { ...BATCH_ORDER[0], value: cursor.startedAtMillis },
        { ...BATCH_ORDER[1], value: cursor.id },
      ])
    : {};
  return { filter: { ...batchScope(organization, suite), ...after }, options: { sort: sortOf(BATCH_ORDER), limit: limit + 1 } };
}

@QueryHandler(ListBatches)
export class ListBatchesHandler implements IQueryHandler<ListBatches, BatchList> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, cursor, limit: requested, suite }: ListBatches): Promise<BatchList> {
    const limit = clampLimit(requested);
    const batches = this.readStore.collection<BatchDocument>(BATCHES);
    const { filter, options } = batchPageQuery(organization, cursor, limit, suite);
    // The total is kept by its projection: counting the batches would cost as many as there are.
    const totals = this.readStore.collection<BatchTotalDocument>(BATCH_TOTALS);
    const [documents, counted] = await Promise.all([batches.find(filter, options), totals.findOne({ _id: batchTotalId(organization, suite) })]);
    const page = pageOf(documents, limit, batchCursor, batchSummary);
    return { batches: page.items, next: page.next, total: counted?.batches ?? 0 };
  }
}
