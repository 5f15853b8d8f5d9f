import type { FastifyInstance } from 'fastify';

/**
 * The operations whose valid bodies reach ASSAY_MAX_BODY_BYTES: a batch start carries up to
 * 100 cases, each with a setup source of up to 1,000,000 characters (runner.batches.start takes
 * the same body), and a local runner's report up to 1000 trajectory entries, each up to the
 * output cap.
 */
const LARGE_BODY_PATHS = new Set(['/v1/evals.batches.start', '/v1/runner.batches.start', '/v1/runner.trials.report']);

/**
 * The limit of every other operation. The largest of their valid bodies is `environment.set`:
 * 100 variables of a 128-character name and a 32,768-character value, 3.3 MB in ASCII and
 * 13.2 MB if every character takes four bytes of UTF-8.
 */
export const OTHER_OPERATIONS_MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Each route's body limit, set as Nest registers it: a body is refused with 400 as soon as its
 * size passes the limit, before any of it is parsed, so a read cannot be made to parse (and
 * hold the event loop for) a body the size a batch start may have.
 */
export function limitBodiesPerOperation(fastify: FastifyInstance, maxBodyBytes: number): void {
  fastify.addHook('onRoute', (route) => {
    route.bodyLimit = LARGE_BODY_PATHS.has(route.url) ? maxBodyBytes : Math.min(maxBodyBytes, OTHER_OPERATIONS_MAX_BODY_BYTES);
  });
}
