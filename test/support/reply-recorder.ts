import type { FastifyReply } from 'fastify';

/** Fastify's reply, as far as a controller uses it: records the status and body it sends. */
export function replyRecorder() {
  const answer: { status?: number; body?: unknown } = {};
  const reply = {
    status(code: number) {
      answer.status = code;
      return reply;
    },
    send(body: unknown) {
      answer.body = body;
      return reply;
    },
  };
  return { answer, reply: reply as unknown as FastifyReply };
}
