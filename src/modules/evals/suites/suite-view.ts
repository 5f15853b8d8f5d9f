import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { CASES, CaseDocument } from '../cases/case.projection';
import type { EvalSource } from '#shared/eval-definitions';
import type { SuiteDocument } from './suite.projection';

/** The suite summary of the spec. */
export interface SuiteSummary {
  id: string;
  name: string;
  lastRunAt: string | null;
  cases: number;
  variants: number;
  tally: { passed: number; scored: number };
}

export interface SuiteDetail extends SuiteSummary {
  setup: { prompt: string; source: EvalSource | null } | null;
  tags: string[];
}

/** The cases of these suites, by suite id, from the cases read model (one indexed query). */
export async function casesOfSuites(store: ReadStore, organization: string, suiteIds: string[]): Promise<Map<string, CaseDocument[]>> {
  const bySuite = new Map<string, CaseDocument[]>(suiteIds.map((id) => [id, []]));
  if (suiteIds.length === 0) return bySuite;
  const cases = await store.collection<CaseDocument>(CASES).find({ organization, 'suite.id': { $in: suiteIds } });
  for (const document of cases) bySuite.get(document.suite.id)?.push(document);
  return bySuite;
}

/**
 * `variants` counts distinct combinations (harness, model, sandbox, profile, user model) across
 * the suite's cases; the tally adds up the newest run of each case and variant.
 */
export function suiteSummary(suite: SuiteDocument, cases: readonly CaseDocument[]): SuiteSummary {
  const variants = cases.flatMap((document) => document.variants);
  const newest = variants.flatMap(({ distribution, lastRunId }) => (distribution !== null && lastRunId !== null ? [distribution] : []));
  return {
    id: suite.suiteId,
    name: suite.name,
    lastRunAt: suite.lastRunAt,
    cases: cases.length,
    variants: new Set(variants.map((variant) => variant.identity)).size,
    tally: {
      passed: newest.reduce((sum, distribution) => sum + distribution.passed, 0),
      scored: newest.reduce((sum, distribution) => sum + distribution.scored, 0),
    },
  };
}

/** The recorded setup, null where the suite's last run predates the definition on record. */
export function suiteDetail(suite: SuiteDocument, cases: readonly CaseDocument[]): SuiteDetail {
  const definition = suite.definition;
  const current = definition !== null && (suite.lastBatchId === null || definition.definedAtMillis <= suite.lastRunAtMillis);
  const tags = [...new Set(cases.flatMap((document) => document.tags))].sort();
  return {
    ...suiteSummary(suite, cases),
    setup: current ? { prompt: definition.prompt, source: definition.source } : null,
    tags,
  };
}
