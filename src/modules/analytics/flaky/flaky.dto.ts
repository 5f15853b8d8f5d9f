import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { OptionalSlug } from '../analytics-fields';

export const MAX_FLAKY = 500;

/** `analytics.flaky`: the (case, variant) pairs whose trials disagree most, of a suite or of the organization. */
export class FlakyDto {
  @OptionalSlug() suiteId?: string;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_FLAKY) limit: number = 50;
}
