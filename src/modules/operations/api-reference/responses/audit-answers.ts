import type { RouteAnswer } from '#infrastructure/http/openapi/openapi-document';
import { anyObject, integer, list, number, object, orNull, record, text, time } from './schema-builders';

const chainLink = orNull(object({ prevHash: orNull(text), hash: text }));
const auditEvent = object({
  position: integer,
  id: text,
  stream: text,
  category: text,
  revision: integer,
  type: text,
  time,
  actor: text,
  correlationId: text,
  causationId: text,
  data: {},
  metadata: anyObject,
  chain: chainLink,
});
const requirement = object({ minPassRate: number, minTrials: integer });

/** The answers of the audit operations and of the prompts' snapshot and policies. */
export const AUDIT_ANSWERS: Record<string, RouteAnswer> = {
  'audit.events.list': {
    summary: "The organization's events, oldest first, as stored",
    answer: object({ events: list(auditEvent), next: orNull(text) }),
    errors: [400, 403],
  },
  'audit.events.export': {
    summary: "The organization's events as NDJSON, streamed, ending with the count and the chain hash",
    contentType: 'application/x-ndjson',
    answer: {
      type: 'string',
      description:
        'One audit event per line (the form audit.events.list answers), then a last line `{"count", "chainHash"}`: ' +
        'chainHash = sha256 over the lines in order, each step hashing the previous hash with the line (see docs/api.md).',
    },
    errors: [400, 403],
  },
  'audit.verify': {
    summary: "Recomputes the organization's hash chain and answers its first break",
    answer: object({
      ok: { type: 'boolean' },
      checked: integer,
      unchained: integer,
      firstBreak: orNull(object({ position: integer, stream: text, revision: integer, reason: text })),
    }),
    errors: [403],
  },
  'prompts.snapshot': {
    summary: 'Every prompt with the version each channel served at one instant',
    answer: object({ at: time, prompts: list(object({ id: text, channels: record(integer) })) }),
    errors: [400, 403],
  },
  'prompts.policies.set': { summary: "Set or remove a channel's evidence requirement", answer: { $ref: '#/components/schemas/Ok' }, errors: [400, 403] },
  'prompts.policies.list': {
    summary: "The organization's channel policies",
    answer: object({ data: list(object({ channel: text, requireEvidence: requirement, setBy: text, setAt: time })) }),
    errors: [403],
  },
};
