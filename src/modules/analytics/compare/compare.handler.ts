import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { BadRequest, NotFound } from '#shared/errors';
import { AnalyticsRunDocument, ANALYTICS_RUNS, ANALYTICS_TALLIES, TallyDocument } from '../analytics-documents';
import { knownScope } from '../known-scope';
import { ComparedSide, compareSides, Comparison } from './comparison';
import { CompareVariants } from './compare.query';

@QueryHandler(CompareVariants)
export class CompareHandler implements IQueryHandler<CompareVariants, Comparison> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, batchIds, suiteId, variantKeys }: CompareVariants): Promise<Comparison> {
    if (batchIds !== null && (suiteId !== null || variantKeys !== null)) {
      throw new BadRequest('Give either batchIds, or suiteId with variants: not both.');
    }
    if (batchIds !== null) return this.byBatches(organization, [...new Set(batchIds)]);
    if (suiteId === null || variantKeys === null) throw new BadRequest('Give batchIds, or suiteId with variants (2 to 10 variantKeys).');
    return this.bySuite(organization, suiteId, [...new Set(variantKeys)]);
  }

  /** Each batch's runs, one side per (batch, variant definition). */
  private async byBatches(organization: string, batchIds: string[]): Promise<Comparison> {
    const runs = this.readStore.collection<AnalyticsRunDocument>(ANALYTICS_RUNS);
    const sides = new Map<string, ComparedSide>();
    for (const batchId of batchIds) {
      const found = await runs.find({ organization, batchId });
      if (found.length === 0) throw new NotFound(`Batch "${batchId}" does not exist.`);
      for (const run of found.sort((a, b) => a._id.localeCompare(b._id))) {
        const key = `${batchId}\u0000${run.variantKey}`;
        const side = sides.get(key) ?? { batchId, variantKey: run.variantKey, variant: run.variant, cases: new Map() };
        side.cases.set(run.caseId, { caseName: run.caseName, tally: run.tally });
        sides.set(key, side);
      }
    }
    if (sides.size < 2) throw new BadRequest('These batches hold a single variant definition: give another batch to compare it with.');
    return compareSides([...sides.values()], batchIds.length > 1);
  }

  /** The suite's whole history of each variant definition, case by case. */
  private async bySuite(organization: string, suiteId: string, variantKeys: string[]): Promise<Comparison> {
    await knownScope(this.readStore, organization, { suiteId });
    if (variantKeys.length < 2) throw new BadRequest('Give at least two different variants to compare.');
    const documents = await this.readStore.collection<TallyDocument>(ANALYTICS_TALLIES).find({ organization, caseSet: suiteId });
    const sides = variantKeys.map((variantKey): ComparedSide => {
      const held = documents.filter((document) => document.variantKey === variantKey);
      if (held.length === 0) throw new NotFound(`Variant "${variantKey}" has no trials in suite "${suiteId}".`);
      const cases = new Map(held.map((document) => [document.caseId ?? '', { caseName: document.caseName ?? '', tally: document }] as const));
      return { batchId: null, variantKey, variant: held[0].variant, cases };
    });
    return compareSides(sides, false);
  }
}
