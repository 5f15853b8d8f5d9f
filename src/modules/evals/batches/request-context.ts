import type { FastifyRequest } from 'fastify';
import { canonicalJson, sha256Hex } from '#shared/hash';
import type { Trigger } from './batch.events';
import { readIdempotencyKey } from './idempotency';

/** The trigger is client-reported context from headers, never authorization. */
export function readTrigger(request: FastifyRequest): Trigger {
  const source = request.headers['assay-trigger-source'];
  const url = request.headers['assay-trigger-url'];
  const text = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.slice(0, 2000);
  return { source: text(source) || 'api', url: text(url) || null };
}

/** The idempotency key and a hash of the body it protects, or null without the header. */
export function readIdempotency(request: FastifyRequest, operation: string, body: unknown): { key: string; requestHash: string } | null {
  const key = readIdempotencyKey(request.headers['idempotency-key']);
  return key === null ? null : { key, requestHash: sha256Hex(`${operation}\u0000${canonicalJson(body)}`) };
}
