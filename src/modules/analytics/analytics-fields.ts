import { IsISO8601, IsOptional, IsString, Length, Matches } from 'class-validator';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
export const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const VARIANT_KEY = /^vk_[0-9a-f]{20}$/;

function all(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => decorators.forEach((decorator) => decorator(target, property));
}

/** An optional instant: an ISO-8601 date-time with a zone. */
export const OptionalInstant = (): PropertyDecorator =>
  all(
    IsOptional(),
    IsString({ message: 'Expected an ISO-8601 string' }),
    Matches(TIMESTAMP, { message: 'must be an ISO-8601 date-time with a zone, e.g. 2025-01-31T12:00:00Z' }),
    IsISO8601({ strict: true, strictSeparator: true }, { message: 'must be a real date and time' }),
  );

export const OptionalSlug = (): PropertyDecorator =>
  all(IsOptional(), IsString(), Length(1, 100), Matches(SLUG, { message: 'must be lower-case words joined by "-"' }));

export const IsVariantKey = (): PropertyDecorator =>
  all(IsString(), Matches(VARIANT_KEY, { message: 'must be a variantKey as analytics answers give it: "vk_" and 20 hex digits' }));
