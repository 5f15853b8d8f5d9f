import { CanActivate, ExecutionContext, Injectable, Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { AssayRequest, PERMISSION_KEY, PUBLIC_KEY } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Forbidden, Unauthorized } from '#shared/errors';
import type { Permission } from '#shared/permissions';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { OAuthVerifier } from './oauth.verifier';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Every operation but health and readiness needs a bearer credential: an API key or an OAuth
 * access token. 401 when it is missing or invalid, 403 when it lacks the permission.
 */
interface OperationAccess {
  isPublic: boolean;
  /** The permission the operation needs; null: any authenticated caller. */
  needed: Permission | null;
}

/** The route handler Nest hands a guard (`ExecutionContext.getHandler`). */
type Handler = ReturnType<ExecutionContext['getHandler']>;

@Injectable()
export class AuthGuard implements CanActivate {
  private readonly access = new WeakMap<Handler, OperationAccess>();

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly oauth: OAuthVerifier | null,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const { isPublic, needed } = this.accessOf(context.getHandler(), context.getClass());
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest & AssayRequest>();
    const caller = this.authenticate(request.headers.authorization);
    // A remembered API key answers synchronously: the common path allocates no promise.
    return caller instanceof Promise ? caller.then((resolved) => this.admit(request, resolved, needed)) : this.admit(request, caller, needed);
  }

  private admit(request: AssayRequest, caller: Caller, needed: Permission | null): true {
    request.caller = caller;
    if (needed && !caller.permissions.includes(needed)) {
      throw new Forbidden(`This operation needs the permission "${needed}", which this credential does not have.`);
    }
    return true;
  }

  /** What an operation's decorators declare, read once per handler rather than on every request. */
  private accessOf(handler: Handler, controller: Type): OperationAccess {
    let access = this.access.get(handler);
    if (!access) {
      const targets = [handler, controller];
      access = {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare -- undefined on a handler that is not marked public
        isPublic: this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets) === true,
        needed: this.reflector.getAllAndOverride<Permission | null | undefined>(PERMISSION_KEY, targets) ?? null,
      };
      this.access.set(handler, access);
    }
    return access;
  }

  private authenticate(header: string | undefined): Caller | Promise<Caller> {
    if (!header) throw new Unauthorized('Send a credential in the Authorization header: Bearer <API_KEY>.');
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match) throw new Unauthorized('The Authorization header must be "Bearer <API_KEY>" or "Bearer <ACCESS_TOKEN>".');
    const token = match[1];
    if (JWT_SHAPE.test(token)) {
      if (!this.oauth) throw new Unauthorized('This server does not accept OAuth access tokens; use an API key.');
      return this.oauth.authenticate(token);
    }
    return this.apiKeys.authenticate(token);
  }
}
