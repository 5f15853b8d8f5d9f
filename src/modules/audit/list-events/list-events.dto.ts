import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { CATEGORY_PATTERN, OptionalInstant, OptionalText } from '../audit-filters';
import { Matches } from 'class-validator';

export const DEFAULT_AUDIT_LIMIT = 100;
export const MAX_AUDIT_LIMIT = 1000;

/** Strict: a misspelt filter must not silently widen the answer to every event. */
@ForbidUnknownProperties()
export class ListAuditEventsDto {
  @OptionalText(1000) stream?: string | null;

  @IsOptional()
  @Matches(CATEGORY_PATTERN, { message: 'must be a stream category: 1 to 64 of A-Z a-z 0-9 _ . : $' })
  category?: string | null;

  @OptionalText(200) type?: string | null;
  @OptionalText(300) actor?: string | null;
  @OptionalInstant() from?: string | null;
  @OptionalInstant() to?: string | null;
  @OptionalText(200) cursor?: string | null;

  @IsOptional()
  @IsInt({ message: 'Expected an integer' })
  @Min(1, { message: 'must be at least 1' })
  @Max(MAX_AUDIT_LIMIT, { message: `must be at most ${MAX_AUDIT_LIMIT}` })
  limit?: number | null;
}
