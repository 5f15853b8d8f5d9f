import { applyDecorators, createParamDecorator, ExecutionContext, HttpCode, Post, SetMetadata } from '@nestjs/common';
import type { Caller } from '#shared/caller';
import type { Permission } from '#shared/permissions';

export const PERMISSION_KEY = 'assay:permission';
export const PUBLIC_KEY = 'assay:public';

/** Every registered operation name, so an unknown path is told apart from a wrong method. */
const operations = new Set<string>();

export function knownOperationPaths(): ReadonlySet<string> {
  return new Set([...operations].map((name) => `/v1/${name}`));
}

/**
 * Declares a public operation: `POST /v1/<area>.<resource>.<operation>`, answering 200, with
 * the permission it needs (`null`: any authenticated caller).
 */
export function Operation(name: string, permission: Permission | null): MethodDecorator {
  operations.add(name);
  return applyDecorators(Post(`/v1/${name}`), HttpCode(200), SetMetadata(PERMISSION_KEY, permission));
}

/** An endpoint that needs no credential (health and readiness). */
export const Public = (): MethodDecorator => SetMetadata(PUBLIC_KEY, true);

export interface AssayRequest {
  correlationId: string;
  caller?: Caller;
  startedAt: number;
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
