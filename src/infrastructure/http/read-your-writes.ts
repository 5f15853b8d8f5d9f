import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { JsonLogger } from '../logging/json-logger';
import type { ProjectionRunner } from '../processing/projection-runner';
import type { WriteTracker } from '../processing/read-your-writes';
import type { AssayRequest } from './operation.decorator';

type TrackedRequest = FastifyRequest & Partial<AssayRequest> & { writesOpen?: boolean };

/**
 * Read-your-writes for every operation at once: a request that appended events answers only
 * once the local read models reflect them, so a `get` right after a write sees it. A request
 * that appended nothing (every read) answers at once. The wait is bounded; past it the answer
 * goes out anyway and the lag is logged. Hooks rather than a Nest interceptor, because an
 * interceptor puts an RxJS pipeline and an async resource on every read as well.
 */
export function holdAnswersUntilProjected(
  fastify: FastifyInstance,
  writes: WriteTracker,
  projections: ProjectionRunner,
  timeoutMs: number,
  logger: JsonLogger,
): void {
  const release = (request: TrackedRequest): number => {
    if (!request.writesOpen || !request.correlationId) return -1;
    request.writesOpen = false;
    return writes.end(request.correlationId);
  };

  // Registered after the hook that sets the correlation id.
  fastify.addHook('onRequest', (request: TrackedRequest, _reply, done) => {
    if (request.correlationId) {
      writes.begin(request.correlationId);
      request.writesOpen = true;
    }
    done();
  });

  // Every request that reaches a handler ends in a send, even when its client has hung up.
  fastify.addHook('onSend', (request: TrackedRequest, _reply, payload, done) => {
    const position = release(request);
    if (position < 0) {
      done(null, payload);
      return;
    }
    projections.waitFor(position, timeoutMs).then(
      (reached) => {
        if (!reached) logger.warn('read models lag behind a write', { correlationId: request.correlationId, position, projected: projections.position });
        done(null, payload);
      },
      (error: unknown) => {
        // The write is stored; the answer says so even though the read models cannot show it.
        logger.error('read models cannot reflect a write', {
          correlationId: request.correlationId,
          position,
          error: error instanceof Error ? error.message : String(error),
        });
        done(null, payload);
      },
    );
  });
}
