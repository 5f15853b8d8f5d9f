import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AssayRequest } from '../http/operation.decorator';
import { inRanges } from './address-ranges';
import type { ServiceMetrics } from './service-metrics';

/**
 * `GET /metrics` for Prometheus, answered only to peers in the allowed ranges (loopback unless
 * ASSAY_METRICS_ALLOW says otherwise; others get the 404 of a route that does not exist), and
 * the hook that counts every answered request by operation and status. Registered only when
 * ASSAY_METRICS=1: otherwise nothing is measured and the path does not exist.
 */
export function serveMetrics(fastify: FastifyInstance, metrics: ServiceMetrics, allow: readonly string[]): void {
  fastify.addHook('onResponse', (request: FastifyRequest & Partial<AssayRequest>, reply: FastifyReply, done) => {
    metrics.observeRequest({
      operation: operationLabel(request),
      method: request.method,
      status: reply.statusCode,
      seconds: (performance.now() - (request.startedAt ?? performance.now())) / 1000,
      refusal: request.refusal,
    });
    done();
  });
  fastify.get('/metrics', async (request, reply) => {
    if (!inRanges(request.socket.remoteAddress, allow)) {
      return reply.status(404).send({ _tag: 'NotFound', message: 'There is no operation at /metrics. Operations are POST /v1/<area>.<resource>.<operation>.' });
    }
    const { text, contentType } = await metrics.scrape();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(text);
  });
}

/** The route's operation (`evals.batches.get`), never the raw URL: unknown paths share one label. */
function operationLabel(request: FastifyRequest): string {
  const route = request.routeOptions.url;
  if (route === undefined) return 'unmatched';
  return route.startsWith('/v1/') ? route.slice(4) : route;
}
