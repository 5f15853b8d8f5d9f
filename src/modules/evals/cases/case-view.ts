import type { CaseDocument, CaseVersion, VariantSummaryDocument } from './case.projection';

/** The variant summary of the spec: the number of runs and the state of the newest one. */
export function variantSummary(entry: VariantSummaryDocument) {
  const { variant, runs, status, lastRunAt, lastRunId, distribution } = entry;
  return { variant, runs, status, lastRunAt, lastRunId, distribution };
}

export type VariantSummary = ReturnType<typeof variantSummary>;

export interface CaseSummary {
  id: string;
  name: string;
  lastRunAt: string | null;
  suite: { id: string; name: string };
  tags: string[];
  variants: VariantSummary[];
}

export interface CaseDetail {
  id: string;
  name: string;
  setup: CaseDocument['setup'];
  suite: { id: string; name: string };
  tags: string[];
  variants: VariantSummary[];
  /** Newest first. */
  versions: CaseVersion[];
}

export function caseSummary(document: CaseDocument): CaseSummary {
  const { caseId, name, lastRunAt, suite, tags, variants } = document;
  return { id: caseId, name, lastRunAt, suite, tags, variants: variants.map(variantSummary) };
}

export function caseDetail(document: CaseDocument): CaseDetail {
  const { caseId, name, setup, suite, tags, variants, versions } = document;
  return { id: caseId, name, setup, suite, tags, variants: variants.map(variantSummary), versions: [...versions].reverse() };
}
