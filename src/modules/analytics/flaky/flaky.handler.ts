import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { ANALYTICS_TALLIES, CASE_HISTORIES, TallyDocument } from '../analytics-documents';
import { knownScope } from '../known-scope';
import { tallyView, TallyView } from '../tally-view';
import { variantLabel, VariantSummary } from '../variant-key';
import { ListFlaky } from './flaky.query';

export interface FlakyCase extends TallyView {
  suiteId: string;
  caseId: string;
  caseName: string;
  variantKey: string;
  variant: VariantSummary;
  label: string;
  /** Of the pairs of scored trials within one run, the share whose verdicts differ (0 to 1). */
  flakiness: number;
  /** Runs with a verdict, and those with both a passed and a failed trial. */
  runs: number;
  mixedRuns: number;
}

export interface FlakyCases {
  suiteId: string | null;
  cases: FlakyCase[];
  /** Every flaky (case, variant) pair, of which `cases` lists the first `limit`. */
  total: number;
}

@QueryHandler(ListFlaky)
export class FlakyHandler implements IQueryHandler<ListFlaky, FlakyCases> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, suiteId, limit }: ListFlaky): Promise<FlakyCases> {
    await knownScope(this.readStore, organization, { suiteId });
    const filter = suiteId === null ? { organization, series: CASE_HISTORIES } : { organization, caseSet: suiteId };
    const documents = await this.readStore.collection<TallyDocument>(ANALYTICS_TALLIES).find(filter);
    const flaky = documents
      .filter((document) => document.disagreeingPairs > 0)
      .map(flakyCase)
      .sort(
        (a, b) =>
          b.flakiness - a.flakiness ||
          b.mixedRuns - a.mixedRuns ||
          a.suiteId.localeCompare(b.suiteId) ||
          a.caseId.localeCompare(b.caseId) ||
          a.label.localeCompare(b.label),
      );
    return { suiteId, cases: flaky.slice(0, limit), total: flaky.length };
  }
}

function flakyCase(document: TallyDocument): FlakyCase {
  return {
    suiteId: document.suiteId ?? '',
    caseId: document.caseId ?? '',
    caseName: document.caseName ?? '',
    variantKey: document.variantKey,
    variant: document.variant,
    label: variantLabel(document.variant),
    flakiness: document.disagreeingPairs / document.pairs,
    runs: document.runs,
    mixedRuns: document.mixedRuns,
    ...tallyView(document),
  };
}
