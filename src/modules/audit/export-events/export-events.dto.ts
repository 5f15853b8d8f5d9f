import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { OptionalCategories, OptionalInstant } from '../audit-filters';

/** Strict: a misspelt filter must not silently widen the export to every event. */
@ForbidUnknownProperties()
export class ExportAuditEventsDto {
  @OptionalInstant() from?: string | null;
  @OptionalInstant() to?: string | null;
  @OptionalCategories() categories?: string[] | null;
}
