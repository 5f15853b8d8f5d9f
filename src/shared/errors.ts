/**
 * Domain errors, typed by the spec's `_tag`. They are mapped to HTTP in one place
 * (infrastructure/http/error-mapping.ts), always in the spec's error shape.
 */
export type ErrorTag = 'BadRequest' | 'Unauthorized' | 'Forbidden' | 'NotFound' | 'MethodNotAllowed' | 'Conflict' | 'TooManyRequests' | 'BadGateway';

export abstract class DomainError extends Error {
  abstract readonly tag: ErrorTag;
  abstract readonly status: number;

  /**
   * `reason`: a fixed name for a refusal the operators count (the metrics' refusals by reason,
   * e.g. `rule_of_three`); never shown to the caller.
   */
  constructor(
    message: string,
    readonly reason: string | null = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequest extends DomainError {
  readonly tag = 'BadRequest' as const;
  readonly status = 400;
}

export class Unauthorized extends DomainError {
  readonly tag = 'Unauthorized' as const;
  readonly status = 401;
}

export class Forbidden extends DomainError {
  readonly tag = 'Forbidden' as const;
  readonly status = 403;
}

export class NotFound extends DomainError {
  readonly tag = 'NotFound' as const;
  readonly status = 404;
}

export class MethodNotAllowed extends DomainError {
  readonly tag = 'MethodNotAllowed' as const;
  readonly status = 405;
}

export class Conflict extends DomainError {
  readonly tag = 'Conflict' as const;
  readonly status = 409;
}

/** A bound on what a caller holds open at once (live progress streams): retry once one ends. */
export class TooManyRequests extends DomainError {
  readonly tag = 'TooManyRequests' as const;
  readonly status = 429;
}

/** A service this one depends on (a model provider) failed; nothing was recorded, and a retry may succeed. */
export class BadGateway extends DomainError {
  readonly tag = 'BadGateway' as const;
  readonly status = 502;
}
