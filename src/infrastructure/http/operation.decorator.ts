import { applyDecorators, createParamDecorator, ExecutionContext, Get, HttpCode, Post, SetMetadata } from '@nestjs/common';
import type { Caller } from '#shared/caller';
import type { Permission } from '#shared/permissions';

export const PERMISSION_KEY = 'assay:permission';
export const PUBLIC_KEY = 'assay:public';
/** The operation's name (`evals.batches.get`), for the API document and the metrics. */
export const OPERATION_NAME_KEY = 'assay:operation';

/** Every registered operation name, so an unknown path is told apart from a wrong method. */
const operations = new Set<string>();

/** The paths served by GET only: the probes, the API document and reference, streams. */
const getPaths = new Set<string>(['/health', '/ready']);

export function knownOperationPaths(): ReadonlySet<string> {
  return new Set([...operations].map((name) => `/v1/${name}`));
}

export function knownGetPaths(): ReadonlySet<string> {
  return getPaths;
}

/**
 * Declares a public operation: `POST /v1/<area>.<resource>.<operation>`, answering 200, with
 * the permission it needs (`null`: any authenticated caller).
 */
export function Operation(name: string, permission: Permission | null): MethodDecorator {
  operations.add(name);
  return applyDecorators(Post(`/v1/${name}`), HttpCode(200), SetMetadata(PERMISSION_KEY, permission), SetMetadata(OPERATION_NAME_KEY, name));
}

/**
 * Declares an operation served by GET (`GET /v1/<name>`, or `path` when given): what cannot be a
 * JSON body answered at once, such as a stream of events, or what a browser opens (the API
 * document). `permission` as for `Operation`; combine with `Public()` for no credential.
 */
export function GetOperation(name: string, permission: Permission | null, path = `/v1/${name}`): MethodDecorator {
  getPaths.add(path);
  return applyDecorators(Get(path), SetMetadata(PERMISSION_KEY, permission), SetMetadata(OPERATION_NAME_KEY, name));
}

/** An endpoint that needs no credential (health and readiness). */
export const Public = (): MethodDecorator => SetMetadata(PUBLIC_KEY, true);

/** A GET anyone may call (the API document, its reference page): no credential, no operation name. */
export function PublicGet(path: string): MethodDecorator {
  getPaths.add(path);
  return applyDecorators(Get(path), Public());
}

export interface AssayRequest {
  correlationId: string;
  caller?: Caller;
  startedAt: number;
  /** The reason of a counted refusal (a DomainError's `reason`), for the metrics. */
  refusal?: string;
}

/** The authenticated caller, set by the auth guard. */
export const CurrentCaller = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => {
  const request = context.switchToHttp().getRequest<AssayRequest>();
  if (!request.caller) throw new Error('CurrentCaller used on an endpoint without authentication.');
  return request.caller;
});

/** The request's correlation id. */
export const CorrelationId = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  return context.switchToHttp().getRequest<AssayRequest>().correlationId;
});
