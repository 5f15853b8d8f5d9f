import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * A graceful stop finishes the requests in flight, and no more: a connection with none is closed
 * as the stop begins, one with a request in flight once that request is answered. Node closes at
 * that moment only the connections that were served and are idle; one that has sent no request
 * (a client or load balancer that opened it ahead of use, a request still sending its headers)
 * held the stop until Node's header timeout found it, 60 to 90 s later, and one whose request
 * ended during the stop until its keep-alive timeout (72 s).
 */
export function closeQuietConnectionsOnStop(fastify: FastifyInstance): void {
  const server = fastify.server;
  const inFlight = new Map<Socket, number>();
  const open = new Set<Socket>();
  let stopping = false;
  server.on('connection', (socket: Socket) => {
    // Accepted between the stop's start and the listener's close: nothing will be served on it.
    if (stopping) {
      socket.destroy();
      return;
    }
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      inFlight.delete(socket);
    });
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      if (left > 0) inFlight.set(socket, left);
      else {
        inFlight.delete(socket);
        if (stopping) endAnswered(socket);
      }
    });
  });
  fastify.addHook('preClose', (done) => {
    stopping = true;
    for (const socket of open) if (!inFlight.has(socket)) socket.destroy();
    done();
  });
}

/** How long an answered connection may take to close its side once the stop ended it. */
const CLOSE_GRACE_MS = 1_000;

/** Ends a connection whose last answer went out: its data is sent first; cut if the client does not close. */
function endAnswered(socket: Socket): void {
  socket.end();
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}
