import { IsIn, IsOptional } from 'class-validator';
import { IsVariantKey, OptionalInstant, OptionalSlug } from '../analytics-fields';
import { BUCKETS, BucketSize } from '../buckets';

/** `analytics.passRates`: pass rates per variant definition per time bucket. */
export class PassRatesDto {
  @OptionalSlug() suiteId?: string;
  @OptionalSlug() caseId?: string;
  @IsOptional() @IsVariantKey() variant?: string;
  @OptionalInstant() from?: string;
  @OptionalInstant() to?: string;
  @IsOptional() @IsIn(BUCKETS, { message: 'must be hour, day or week' }) bucket: BucketSize = 'day';
}
