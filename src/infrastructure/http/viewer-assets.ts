import * as fs from 'node:fs';
import * as path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { JsonLogger } from '../logging/json-logger';

/**
 * Where `npm run build` puts the viewer: `dist/viewer`, beside the compiled server
 * (`dist/main.js` → `dist/viewer`), or, when the server runs from its sources (tests, ts-node),
 * the built copy under the project's `dist`.
 */
export function viewerDirectory(from: string = __dirname): string | null {
  const candidates = [path.resolve(from, '../../viewer'), path.resolve(from, '../../../dist/viewer')];
  // The bundle marks a built viewer: the sources in the project's `viewer/` have an index.html too.
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'index.html')) && fs.existsSync(path.join(dir, 'app.js'))) ?? null;
}

/**
 * The web viewer at `/`: its index and its assets, each a GET route of its own (no wildcard), so
 * every other path still answers the API's 404 and `GET /v1/<operation>` still answers 405. The
 * viewer talks only to the public API, with the key the user pasted.
 */
export async function serveViewer(fastify: FastifyInstance, logger: JsonLogger, root = viewerDirectory()): Promise<void> {
  if (root === null) {
    logger.warn('the web viewer is not built: run "npm run build" to serve it at /');
    return;
  }
  await fastify.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    decorateReply: false,
    // Unhashed names: the browser revalidates (ETag) rather than running an old viewer after an upgrade.
    cacheControl: false,
    setHeaders: (res) => {
      res.setHeader('cache-control', 'no-cache');
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('referrer-policy', 'no-referrer');
      // Own scripts and styles only; the API on the same origin. uPlot sizes its canvas with inline styles.
      res.setHeader(
        'content-security-policy',
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      );
    },
  });
}
