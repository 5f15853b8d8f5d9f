import { IsBoolean, IsInt, IsISO8601, IsOptional, IsString, Length, Matches, Min } from 'class-validator';

/** The spec's Identifiers table. */
export const PROMPT_ID_PATTERN = /^[a-z0-9][a-z0-9/_-]*$/;
export const CHANNEL_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const MAX_CONTENT_LENGTH = 262144;
export const MAX_NAME_LENGTH = 200;
export const MAX_MESSAGE_LENGTH = 2000;
/** A date-time with its zone: without one, the instant would depend on the server's time zone. */
const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

function all(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => decorators.forEach((decorate) => decorate(target, property));
}

export const IsPromptId = (): PropertyDecorator =>
  all(
    IsString({ message: 'Expected a string' }),
    Length(1, 255, { message: 'must be 1 to 255 characters' }),
    Matches(PROMPT_ID_PATTERN, { message: 'must start with a-z or 0-9 and hold only a-z, 0-9, "/", "_" and "-"' }),
  );

export const IsChannel = (): PropertyDecorator =>
  all(
    IsString({ message: 'Expected a string' }),
    Length(1, 36, { message: 'must be 1 to 36 characters' }),
    Matches(CHANNEL_PATTERN, { message: 'must start with a-z or 0-9 and hold only a-z, 0-9, "_" and "-"' }),
  );

export const IsVersion = (): PropertyDecorator =>
  all(IsInt({ message: 'Expected an integer' }), Min(1, { message: 'must be a positive integer (versions start at 1)' }));

export const IsInstant = (): PropertyDecorator =>
  all(
    IsString({ message: 'Expected an ISO-8601 string' }),
    Matches(TIMESTAMP_PATTERN, { message: 'must be an ISO-8601 date-time with a zone, e.g. 2025-01-31T12:00:00.000Z' }),
    IsISO8601({ strict: true, strictSeparator: true }, { message: 'must be a real date and time' }),
  );

export const IsText = (min: number, max: number): PropertyDecorator =>
  all(IsString({ message: 'Expected a string' }), Length(min, max, { message: `must be ${min} to ${max} characters` }));

/** Optional fields: absent or null means not given. */
export const Optional = (...decorators: PropertyDecorator[]): PropertyDecorator => all(IsOptional(), ...decorators);

export const IsFlag = (): PropertyDecorator => IsBoolean({ message: 'Expected a boolean' });
