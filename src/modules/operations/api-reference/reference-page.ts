import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';

/**
 * The reference page: Swagger UI over /v1/openapi.json, every file served by this server from
 * the swagger-ui-dist package (no CDN: the page works offline). Paths are relative, so the page
 * also works behind a proxy that mounts the service under a prefix.
 */
export const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Assay API reference</title>
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
</head>
<body>
<main id="reference" aria-label="Assay API reference"></main>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/reference.js"></script>
</body>
</html>
`;

const INITIALIZER = `window.reference = SwaggerUIBundle({
  url: new URL('v1/openapi.json', document.baseURI).href,
  dom_id: '#reference',
  deepLinking: true,
});
`;

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * `GET /docs/assets/<file>`: the page's files, read once from swagger-ui-dist. Registered on
 * Fastify directly: a page's files are not API operations (the document leaves them out).
 */
export function serveReferenceAssets(fastify: FastifyInstance): void {
  const directory = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>([['reference.js', Buffer.from(INITIALIZER)]]);
  fastify.get<{ Params: { file: string } }>('/docs/assets/:file', async (request, reply) => {
    const { file } = request.params;
    const type = file === 'reference.js' ? 'text/javascript; charset=utf-8' : Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (type === undefined) return reply.status(404).send({ _tag: 'NotFound', message: `The reference page has no file ${file}.` });
    let content = cache.get(file);
    if (!content) {
      content = fs.readFileSync(path.join(directory, file));
      cache.set(file, content);
    }
    return reply.header('content-type', type).header('cache-control', 'public, max-age=3600').send(content);
  });
}
