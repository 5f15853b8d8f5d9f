import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Filter, findToRead, READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { NotFound } from '#shared/errors';
import { CASES, CaseDocument, caseDocumentId } from '../../cases/case.projection';
import { RUNS, RunDocument } from '../run.projection';
import { RUN_TOTALS, RunTotalDocument, runTotalId } from '../run-totals.projection';
import { RunView, runViews } from '../run-view';
import { ListRuns } from './list-runs.query';

export const RUNS_PAGE_SIZE = 20;

export interface RunPage {
  runs: RunView[];
  page: number;
  pageSize: number;
  total: number;
}

@QueryHandler(ListRuns)
export class ListRunsHandler implements IQueryHandler<ListRuns, RunPage> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  /** Unknown case or a variant the case has not run on: 404, as for any id that names nothing. */
  async execute({ organization, caseId, variantId, page }: ListRuns): Promise<RunPage> {
    const known = await this.readStore.collection<CaseDocument>(CASES).findOne({ _id: caseDocumentId(organization, caseId), organization });
    if (!known) throw new NotFound(`Case "${caseId}" does not exist.`);
    if (variantId !== null && !known.variants.some((entry) => entry.variant.id === variantId)) {
      throw new NotFound(`Case "${caseId}" has no variant "${variantId}".`);
    }
    const filter: Filter = { organization, 'case.id': caseId, ...(variantId !== null ? { 'variant.id': variantId } : {}) };
    const runs = this.readStore.collection<RunDocument>(RUNS);
    const sort = { startedAtMillis: -1, _id: -1 } as const;
    const totals = this.readStore.collection<RunTotalDocument>(RUN_TOTALS);
    // Pages are numbered (the spec), so a page skips those before it: along the index of this
    // case's (or variant's) runs, a walk as long as the page number, whatever the collection
    // holds. The total is kept by its projection instead of counted.
    const [documents, counted] = await Promise.all([
      findToRead(runs, filter, { sort, skip: (page - 1) * RUNS_PAGE_SIZE, limit: RUNS_PAGE_SIZE }),
      totals.findOne({ _id: runTotalId(organization, caseId, variantId) }),
    ]);
    return { runs: await runViews(this.readStore, organization, documents), page, pageSize: RUNS_PAGE_SIZE, total: counted?.runs ?? 0 };
  }
}
