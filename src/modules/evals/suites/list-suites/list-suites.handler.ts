import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { afterCursor, clampLimit, Cursor, pageOf, sortOf } from '../../shared/cursor';
import { SUITES, SuiteDocument } from '../suite.projection';
import { casesOfSuites, SuiteSummary, suiteSummary } from '../suite-view';
import { ListSuites } from './list-suites.query';

export interface SuiteList {
  suites: SuiteSummary[];
  next: Cursor | null;
}

/** Most recently active first: the last run's start, then the suite id, both descending. */
const SUITE_ORDER = [
  { field: 'lastRunAtMillis', direction: -1 },
  { field: 'suiteId', direction: -1 },
] as const;

const suiteCursor = (suite: SuiteDocument): Cursor => ({ id: suite.suiteId, startedAtMillis: suite.lastRunAtMillis, name: suite.name });

@QueryHandler(ListSuites)
export class ListSuitesHandler implements IQueryHandler<ListSuites, SuiteList> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, cursor, limit: requested }: ListSuites): Promise<SuiteList> {
    const limit = clampLimit(requested);
    const after = cursor
      ? afterCursor([
          { ...SUITE_ORDER[0], value: cursor.startedAtMillis },
          { ...SUITE_ORDER[1], value: cursor.id },
        ])
      : {};
    const documents = await this.readStore.collection<SuiteDocument>(SUITES).find({ organization, ...after }, { sort: sortOf(SUITE_ORDER), limit: limit + 1 });
    const page = pageOf(documents, limit, suiteCursor, (suite) => suite);
    const cases = await casesOfSuites(
      this.readStore,
      organization,
      page.items.map((suite) => suite.suiteId),
    );
    return { suites: page.items.map((suite) => suiteSummary(suite, cases.get(suite.suiteId) ?? [])), next: page.next };
  }
}
