import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** How long after an early answer the rest of its body may keep arriving. */
const DRAIN_TIMEOUT_MS = 10_000;
/** The least a refused body may still send after its answer, however small the body limit. */
export const MIN_DRAIN_BYTES = 16 * 1024 * 1024;

/**
 * Answers that go out before their request's body was read (too large by its content-length
 * or past the limit while arriving, a content type other than JSON) keep the connection open
 * while the client sends the rest, which is read and dropped. Closing the socket with unread
 * data in it makes the kernel reset the connection, and a client still writing its body (most
 * clients write the whole request before they read) then sees the reset instead of the 400
 * that explains it. Fastify asks to close after a body too large by its content-length; that
 * is undone here, so the connection stays usable once the body is through. The reading is
 * bounded: past as many bytes as the body limit (at least 16 MiB) or ten seconds, the socket
 * is closed, and that client may see a reset after all.
 */
export function drainBeforeClosing(fastify: FastifyInstance, maxBodyBytes: number): void {
  const boundBytes = Math.max(maxBodyBytes, MIN_DRAIN_BYTES);
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    if (raw.complete || raw.readableEnded || raw.destroyed) {
      done(null, payload);
      return;
    }
    void reply.removeHeader('connection');
    drain(raw, boundBytes);
    done(null, payload);
  });
}

function drain(raw: IncomingMessage, boundBytes: number): void {
  let received = 0;
  const stop = () => {
    clearTimeout(timer);
    raw.off('data', onData).off('end', stop).off('close', stop);
  };
  const giveUp = () => {
    stop();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- Node detaches (nulls) a request's socket once the connection is handed off or gone
    raw.socket?.destroy();
  };
  const onData = (chunk: Buffer | string) => {
    received += chunk.length;
    if (received > boundBytes) giveUp();
  };
  const timer = setTimeout(giveUp, DRAIN_TIMEOUT_MS);
  raw.on('data', onData).on('end', stop).on('close', stop);
  raw.resume();
}
