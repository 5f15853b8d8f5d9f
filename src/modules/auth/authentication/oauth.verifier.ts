import { createRemoteJWKSet, errors as joseErrors, jwtVerify, JWTPayload } from 'jose';
import type { OAuthConfig } from '../../../config';
import { isOrganizationId } from '../../../config';
import type { Caller } from '#shared/caller';
import { Unauthorized } from '#shared/errors';
import { isPermission, Permission } from '#shared/permissions';

/**
 * Verifies OAuth access tokens (JWTs) against the issuer's JWKS: signature, issuer, audience
 * and expiry. The organization comes from a configurable claim; permissions from a
 * `permissions` array or the space-separated `scope` claim.
 */
export class OAuthVerifier {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;

  constructor(private readonly config: OAuthConfig) {
    this.keys = createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30000 });
  }

  async authenticate(token: string): Promise<Caller> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, { issuer: this.config.issuer, audience: this.config.audience }));
    } catch (error) {
      throw new Unauthorized(describeFailure(error));
    }
    const organization = payload[this.config.organizationClaim];
    if (typeof organization !== 'string' || !isOrganizationId(organization)) {
      throw new Unauthorized(`The access token has no valid "${this.config.organizationClaim}" claim naming an organization.`);
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') {
      throw new Unauthorized('The access token has no subject ("sub" claim).');
    }
    return { organization, kind: 'oauth', id: payload.sub, name: payload.sub, permissions: permissionsOf(payload) };
  }
}

function permissionsOf(payload: JWTPayload): Permission[] {
  const granted = Array.isArray(payload.permissions) ? payload.permissions : typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
  return [...new Set(granted.filter(isPermission))];
}

function describeFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The access token has expired. Obtain a new one.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    return `The access token was not issued for this service (claim "${error.claim}" did not match).`;
  }
  if (error instanceof joseErrors.JWKSTimeout || (error instanceof joseErrors.JOSEError && error.code === 'ERR_JWKS_INVALID')) {
    return "The access token could not be checked: the identity provider's keys are unavailable. Retry later.";
  }
  return 'The access token is not valid (signature or format).';
}
