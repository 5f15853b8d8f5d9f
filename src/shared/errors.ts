/**
 * Domain errors, typed by the spec's `_tag`. They are mapped to HTTP in one place
 * (infrastructure/http/error-mapping.ts), always in the spec's error shape.
 */
export type ErrorTag = 'BadRequest' | 'Unauthorized' | 'Forbidden' | 'NotFound' | 'MethodNotAllowed' | 'Conflict' | 'BadGateway';

export abstract class DomainError extends Error {
  abstract readonly tag: ErrorTag;
  abstract readonly status: number;

  constructor(message: string) {
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

/** A service this one depends on (a model provider) failed; nothing was recorded, and a retry may succeed. */
export class BadGateway extends DomainError {
  readonly tag = 'BadGateway' as const;
  readonly status = 502;
}
