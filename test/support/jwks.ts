import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, KeyLike, SignJWT } from 'jose';

export interface TokenOptions {
  subject?: string;
  /** Sign with another key than the one the JWKS publishes. */
  key?: KeyLike;
  expiresIn?: string | number;
  audience?: string;
}

export interface IdentityProvider {
  /** The ASSAY_OAUTH_* variables that make the service trust this provider. */
  env: Record<string, string>;
  token(claims: Record<string, unknown>, options?: TokenOptions): Promise<string>;
  close(): Promise<void>;
}

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'assay-api';

/** An identity provider run by the test itself: a JWKS endpoint on loopback and a signer of access tokens. */
export async function startIdentityProvider(): Promise<IdentityProvider> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const server = http.createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    env: { ASSAY_OAUTH_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`, ASSAY_OAUTH_ISSUER: ISSUER, ASSAY_OAUTH_AUDIENCE: AUDIENCE },
    token: (claims, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(options.audience ?? AUDIENCE)
        .setSubject(options.subject ?? 'user-42')
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '5m')
        .sign(options.key ?? privateKey),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
