import type { JsonSchema } from './request-schemas';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The spec's error shapes (error-mapping.ts is the one place that produces them). */
export const ERROR_SCHEMAS: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    description: 'Every error: a `_tag` naming the kind and a `message` for a person, saying what to change.',
    properties: {
      _tag: {
        type: 'string',
        examples: ['BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'MethodNotAllowed', 'Conflict', 'TooManyRequests', 'InternalError'],
      },
      message: { type: 'string' },
    },
    required: ['_tag', 'message'],
  },
  DecodeIssue: {
    type: 'object',
    properties: {
      _tag: { type: 'string', enum: ['Missing', 'Type', 'Refinement', 'Unexpected', 'Composite'] },
      path: { type: 'array', items: { type: ['string', 'integer'] } },
      message: { type: 'string' },
    },
    required: ['_tag', 'path', 'message'],
  },
  DecodeError: {
    type: 'object',
    description: 'The body does not match the operation schema: one issue per path.',
    properties: { _tag: { const: 'HttpApiDecodeError' }, message: { type: 'string' }, issues: { type: 'array', items: ref('DecodeIssue') } },
    required: ['_tag', 'message', 'issues'],
  },
};

const DESCRIPTIONS: Record<number, string> = {
  400: '`HttpApiDecodeError` when the input does not match the schema (with `issues`), `BadRequest` when it breaks a rule',
  401: '`Unauthorized`: no credential, or one that is not valid',
  403: "`Forbidden`: the credential lacks the operation's permission",
  404: '`NotFound`: the id names nothing in your organization',
  409: '`Conflict`: the current state refuses the request',
  429: '`TooManyRequests`: too many at once; retry later',
  500: '`InternalError`: report the `x-correlation-id`',
};

export function errorResponses(statuses: number[]): Record<string, JsonSchema> {
  const responses: Record<string, JsonSchema> = {};
  for (const status of [...new Set(statuses)].sort()) {
    const schema = status === 400 ? { anyOf: [ref('DecodeError'), ref('Error')] } : ref('Error');
    responses[String(status)] = { description: DESCRIPTIONS[status] ?? 'An error', content: { 'application/json': { schema } } };
  }
  return responses;
}
