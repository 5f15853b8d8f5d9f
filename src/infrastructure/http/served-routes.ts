import type { FastifyInstance } from 'fastify';

export interface ServedRoute {
  method: string;
  path: string;
}

const recorded = new WeakMap<FastifyInstance, ServedRoute[]>();

/**
 * Records every route Fastify registers from now on, whoever registers it (Nest's controllers,
 * the metrics endpoint, the reference page's assets): the API document is built from this list,
 * so it cannot name a route the server does not serve. HEAD routes Fastify adds beside each GET
 * are left out.
 */
export function recordServedRoutes(fastify: FastifyInstance): void {
  const routes: ServedRoute[] = [];
  recorded.set(fastify, routes);
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, path: route.url });
    }
  });
}

export function servedRoutes(fastify: FastifyInstance): readonly ServedRoute[] {
  return recorded.get(fastify) ?? [];
}

/** Routes of the API (the operations, the probes, the metrics), as opposed to pages for people. */
export function isApiPath(path: string): boolean {
  return path.startsWith('/v1/') || path === '/health' || path === '/ready' || path === '/metrics';
}
