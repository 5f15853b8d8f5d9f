import type { BucketSize } from './buckets';
import type { RunCounts, Tally } from './tally';
import type { VariantSummary } from './variant-key';

export const ANALYTICS_RUNS = 'analytics_runs';
export const ANALYTICS_TALLIES = 'analytics_tallies';

export type TrialMark = { commands: number; status: 'pending' | 'passed' | 'failed' | 'void' };

/** A run as analytics needs it: where its trials count, and each trial's command count and verdict. */
export type AnalyticsRunDocument = {
  _id: string;
  organization: string;
  batchId: string;
  suiteId: string;
  caseId: string;
  caseName: string;
  variantKey: string;
  variant: VariantSummary;
  startedAtMillis: number;
  trials: Record<string, TrialMark>;
  counts: RunCounts;
  tally: Tally;
  _position: number;
};

export type TallyScope = 'organization' | 'suite' | 'case';

/**
 * The trials of one variant definition in one scope (the organization, a suite, or a case of a
 * suite) and one time bucket (`all` for a case's whole history). `series` groups the documents a
 * query reads together: scope, suite or case, and bucket size.
 */
export type TallyDocument = Tally & {
  _id: string;
  organization: string;
  scope: TallyScope;
  series: string;
  suiteId: string | null;
  caseId: string | null;
  caseName: string | null;
  bucket: BucketSize | 'all';
  bucketStartMillis: number;
  variantKey: string;
  variant: VariantSummary;
  /** On a case's `all` document only: its suite, to list a suite's cases (flaky, compare). */
  caseSet: string | null;
  _position: number;
};

export const seriesOf = (scope: TallyScope, id: string | null, bucket: BucketSize | 'all') => `${scope}/${id ?? ''}/${bucket}`;

/** The series of every case's whole-history documents (bucket `all`). */
export const CASE_HISTORIES = 'cases/all';
