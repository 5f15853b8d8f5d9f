import type { BucketSize } from '../buckets';

export class GetPassRates {
  constructor(
    readonly organization: string,
    readonly filter: { suiteId: string | null; caseId: string | null; variantKey: string | null },
    readonly window: { from: string | null; to: string | null; bucket: BucketSize },
    readonly now: Date,
  ) {}
}
