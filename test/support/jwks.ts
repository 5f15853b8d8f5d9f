import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, KeyLike } from 'jose';

/** A JWKS endpoint served by the test itself, as an identity provider would serve it. */
export async function serveJwks(publicKey: KeyLike, kid = 'k1'): Promise<{ url: string; close(): Promise<void> }> {
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const server = http.createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/.well-known/jwks.json`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
