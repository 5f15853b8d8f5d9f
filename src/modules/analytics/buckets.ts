export const BUCKETS = ['hour', 'day', 'week'] as const;
export type BucketSize = (typeof BUCKETS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** 1970-01-01 was a Thursday: the first Monday, 00:00 UTC, came 4 days later. */
const MONDAY_OFFSET_MS = 4 * DAY_MS;

export const BUCKET_MS: Record<BucketSize, number> = { hour: HOUR_MS, day: DAY_MS, week: 7 * DAY_MS };

/** The start of the UTC hour, day or ISO week (from Monday) that holds the instant. */
export function bucketStart(millis: number, size: BucketSize): number {
  if (size === 'week') return Math.floor((millis - MONDAY_OFFSET_MS) / BUCKET_MS.week) * BUCKET_MS.week + MONDAY_OFFSET_MS;
  return Math.floor(millis / BUCKET_MS[size]) * BUCKET_MS[size];
}
