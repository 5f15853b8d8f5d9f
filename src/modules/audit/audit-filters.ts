import { ArrayMaxSize, ArrayUnique, IsArray, IsISO8601, IsOptional, IsString, Length, Matches } from 'class-validator';
import { EachElement } from '#infrastructure/http/decode/each-element';
import type { OrganizationReadOptions } from '#infrastructure/event-store/event-store.port';
import { BadRequest } from '#shared/errors';

/** A stream category: the text before the first `-` of a stream name. */
export const CATEGORY_PATTERN = /^[A-Za-z0-9_.:$]{1,64}$/;
export const MAX_CATEGORIES = 50;
/** A date-time with its zone: without one, the instant would depend on the server's time zone. */
const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
const INSTANT_MESSAGE = 'must be an ISO-8601 date-time with a zone, e.g. 2025-01-31T12:00:00.000Z';

function all(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => decorators.forEach((decorate) => decorate(target, property));
}

export const OptionalInstant = (): PropertyDecorator =>
  all(
    IsOptional(),
    IsString({ message: 'Expected an ISO-8601 string' }),
    Matches(TIMESTAMP_PATTERN, { message: INSTANT_MESSAGE }),
    IsISO8601({ strict: true, strictSeparator: true }, { message: 'must be a real date and time' }),
  );

export const OptionalCategories = (): PropertyDecorator =>
  all(
    IsOptional(),
    IsArray({ message: 'Expected an array of stream categories' }),
    ArrayMaxSize(MAX_CATEGORIES, { message: `must hold at most ${MAX_CATEGORIES} categories` }),
    ArrayUnique({ message: 'must not repeat a category' }),
    EachElement(
      (value) => typeof value === 'string' && CATEGORY_PATTERN.test(value),
      'Refinement',
      'must be a stream category: 1 to 64 of A-Z a-z 0-9 _ . : $',
    ),
  );

export const OptionalText = (max: number): PropertyDecorator =>
  all(IsOptional(), IsString({ message: 'Expected a string' }), Length(1, max, { message: `must be 1 to ${max} characters` }));

/** The filters every audit read takes, as the store's read options (times in the stored form). */
export interface AuditFilters {
  stream?: string | null;
  categories?: string[] | null;
  type?: string | null;
  actor?: string | null;
  from?: string | null;
  to?: string | null;
}

export function readOptions(organization: string, filters: AuditFilters, maxCount: number): OrganizationReadOptions {
  const from = instant('from', filters.from);
  const to = instant('to', filters.to);
  if (from !== undefined && to !== undefined && from > to) throw new BadRequest(`"from" (${from}) is after "to" (${to}): nothing can lie between them.`);
  const options: OrganizationReadOptions = { organization, maxCount };
  if (filters.stream != null) options.stream = filters.stream;
  if (filters.categories != null && filters.categories.length > 0) options.categories = filters.categories;
  if (filters.type != null) options.type = filters.type;
  if (filters.actor != null) options.actor = filters.actor;
  if (from !== undefined) options.from = from;
  if (to !== undefined) options.to = to;
  return options;
}

/** ISO-8601 UTC with milliseconds: the form the log stores times in and compares them as. */
function instant(name: string, value: string | null | undefined): string | undefined {
  if (value == null) return undefined;
  const time = new Date(value).getTime();
  if (Number.isNaN(time)) throw new BadRequest(`"${name}" (${JSON.stringify(value)}) is not a date and time; send it like 2025-01-31T12:00:00.000Z.`);
  return new Date(time).toISOString();
}
