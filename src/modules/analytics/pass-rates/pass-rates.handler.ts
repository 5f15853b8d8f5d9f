import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Filter, findToRead, READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { BadRequest } from '#shared/errors';
import { ANALYTICS_TALLIES, seriesOf, TallyDocument } from '../analytics-documents';
import { knownScope } from '../known-scope';
import { BUCKET_MS, bucketStart, BucketSize } from '../buckets';
import { mergeTallies } from '../tally';
import { tallyView, TallyView } from '../tally-view';
import { variantLabel, VariantSummary } from '../variant-key';
import { GetPassRates } from './pass-rates.query';

/** The most buckets one answer holds: a longer window needs a wider bucket. */
export const MAX_BUCKETS = 1000;
/** The window when `from` is not given: this many buckets back from `to`. */
const DEFAULT_BUCKETS: Record<BucketSize, number> = { hour: 48, day: 30, week: 26 };

export interface PassRateLine {
  variantKey: string;
  variant: VariantSummary;
  label: string;
  total: TallyView;
  buckets: Array<{ start: string; end: string } & TallyView>;
}

export interface PassRates {
  bucket: BucketSize;
  from: string;
  to: string;
  suiteId: string | null;
  caseId: string | null;
  variants: PassRateLine[];
}

@QueryHandler(GetPassRates)
export class PassRatesHandler implements IQueryHandler<GetPassRates, PassRates> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, filter, window, now }: GetPassRates): Promise<PassRates> {
    const { from, to } = span(window, now);
    await knownScope(this.readStore, organization, filter);
    const { suiteId, caseId, variantKey } = filter;
    const series =
      caseId !== null
        ? seriesOf('case', caseId, window.bucket)
        : suiteId !== null
          ? seriesOf('suite', suiteId, window.bucket)
          : seriesOf('organization', null, window.bucket);
    const query: Filter = { organization, series, bucketStartMillis: { $gte: bucketStart(from, window.bucket), $lt: to } };
    if (caseId !== null && suiteId !== null) query.suiteId = suiteId;
    if (variantKey !== null) query.variantKey = variantKey;
    const documents = await findToRead(this.readStore.collection<TallyDocument>(ANALYTICS_TALLIES), query);
    return {
      bucket: window.bucket,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      suiteId,
      caseId,
      variants: lines(documents, window.bucket),
    };
  }
}

/** The window asked for, checked: `from` before `to`, at most MAX_BUCKETS buckets. */
function span(window: GetPassRates['window'], now: Date): { from: number; to: number } {
  const to = window.to === null ? now.getTime() : Date.parse(window.to);
  const from =
    window.from === null ? bucketStart(to, window.bucket) - (DEFAULT_BUCKETS[window.bucket] - 1) * BUCKET_MS[window.bucket] : Date.parse(window.from);
  if (from >= to) throw new BadRequest('"from" must be before "to".');
  const buckets = Math.ceil((to - bucketStart(from, window.bucket)) / BUCKET_MS[window.bucket]);
  if (buckets > MAX_BUCKETS) {
    throw new BadRequest(
      `The window spans ${buckets} ${window.bucket} buckets; at most ${MAX_BUCKETS} fit in one answer: narrow from/to or use a wider bucket.`,
    );
  }
  return { from, to };
}

/** One line per variant definition, its buckets oldest first (buckets without trials left out). */
function lines(documents: ReadonlyArray<Readonly<TallyDocument>>, bucket: BucketSize): PassRateLine[] {
  return [...groupBy(documents, (document) => document.variantKey).values()]
    .map((held) => {
      const buckets = [...groupBy(held, (document) => document.bucketStartMillis).entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([start, tallies]) => ({
          start: new Date(start).toISOString(),
          end: new Date(start + BUCKET_MS[bucket]).toISOString(),
          // Most buckets hold one document (one scope, one variant): its tally is the bucket's.
          ...tallyView(tallies.length === 1 ? tallies[0] : mergeTallies(tallies)),
        }));
      const variant = held.reduce((first, document) => (document.bucketStartMillis < first.bucketStartMillis ? document : first)).variant;
      // A copy: the documents are the store's own, and an answer is the caller's.
      return { variantKey: held[0].variantKey, variant: { ...variant }, label: variantLabel(variant), total: tallyView(mergeTallies(held)), buckets };
    })
    .sort((a, b) => a.label.localeCompare(b.label) || a.variantKey.localeCompare(b.variantKey));
}

/** The documents by a key, each group in the documents' order. */
function groupBy<Key>(
  documents: ReadonlyArray<Readonly<TallyDocument>>,
  keyOf: (document: Readonly<TallyDocument>) => Key,
): Map<Key, Array<Readonly<TallyDocument>>> {
  const groups = new Map<Key, Array<Readonly<TallyDocument>>>();
  for (const document of documents) {
    const group = groups.get(keyOf(document));
    if (group) group.push(document);
    else groups.set(keyOf(document), [document]);
  }
  return groups;
}
