import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Filter, READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { afterCursor, clampLimit, Cursor, escapeRegex, pageOf, sortOf } from '../../shared/cursor';
import { SUITES, SuiteDocument } from '../../suites/suite.projection';
import { CASE_TAGS, CASES, CaseDocument, CaseTagsDocument } from '../case.projection';
import { CaseSummary, caseSummary } from '../case-view';
import { CaseFilters, ListCases } from './list-cases.query';

export interface CaseList {
  cases: CaseSummary[];
  next: Cursor | null;
  suites: Array<{ id: string; name: string }>;
  tags: string[];
}

/** By name, case-insensitively, then by id: an order new runs do not reshuffle between pages. */
const CASE_ORDER = [
  { field: 'sortName', direction: 1 },
  { field: 'caseId', direction: 1 },
] as const;

const caseCursor = (document: CaseDocument): Cursor => ({ id: document.caseId, startedAtMillis: document.lastRunAtMillis, name: document.name });

function caseFilter(organization: string, filters: CaseFilters, cursor: Cursor | null): Filter {
  const filter: Filter = { organization };
  if (filters.suite) filter['suite.id'] = filters.suite;
  if (filters.tag) filter.tags = filters.tag;
  // `search` holds the lower-cased id and name, so a lower-cased literal is a case-insensitive match.
  if (filters.q) filter.search = { $regex: escapeRegex(filters.q.toLowerCase()) };
  if (!cursor) return filter;
  return {
    ...filter,
    ...afterCursor([
      { ...CASE_ORDER[0], value: cursor.name.toLowerCase() },
      { ...CASE_ORDER[1], value: cursor.id },
    ]),
  };
}

@QueryHandler(ListCases)
export class ListCasesHandler implements IQueryHandler<ListCases, CaseList> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, filters, cursor, limit: requested }: ListCases): Promise<CaseList> {
    const limit = clampLimit(requested);
    const [documents, suites, tags] = await Promise.all([
      this.readStore.collection<CaseDocument>(CASES).find(caseFilter(organization, filters, cursor), { sort: sortOf(CASE_ORDER), limit: limit + 1 }),
      this.readStore.collection<SuiteDocument>(SUITES).find({ organization }, { sort: { sortName: 1, suiteId: 1 } }),
      this.readStore.collection<CaseTagsDocument>(CASE_TAGS).findOne({ _id: organization }),
    ]);
    const page = pageOf(documents, limit, caseCursor, caseSummary);
    return {
      cases: page.items,
      next: page.next,
      suites: suites.map((suite) => ({ id: suite.suiteId, name: suite.name })),
      tags: (tags?.tags ?? []).map((entry) => entry.tag),
    };
  }
}
