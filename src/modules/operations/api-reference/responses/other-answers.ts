import { boolean, integer, list, number, object, oneOf, OperationAnswer, orNull, ref, text, time } from './schema-builders';

const apiKey = object({ id: text, name: text, permissions: list(text), createdAt: time, revokedAt: orNull(time) });
const ok = ref('Ok');

/** The answers of auth, connectors, environment and prompts operations. */
export const OTHER_ANSWERS: Record<string, OperationAnswer> = {
  'auth.whoami': {
    summary: 'The organization and permissions of the credential in use',
    answer: object({
      organization: text,
      kind: oneOf('api_key', 'oauth'),
      keyId: orNull(text),
      subject: orNull(text),
      name: orNull(text),
      permissions: list(text),
    }),
    errors: [],
  },
  'auth.keys.create': {
    summary: 'Issue an API key (shown once)',
    answer: object({ id: text, key: text, name: text, permissions: list(text), createdAt: time }),
    errors: [400, 403],
  },
  'auth.keys.list': { summary: "The organization's keys, newest first", answer: object({ keys: list(apiKey) }), errors: [403] },
  'auth.keys.revoke': { summary: 'Revoke a key', answer: ok, errors: [400, 403, 404] },
  'connectors.integrations': {
    summary: 'The integrations that can be connected and their fields',
    answer: list(
      object({
        id: text,
        label: text,
        category: text,
        authMethods: list(
          object({
            id: text,
            kind: text,
            label: text,
            fields: list(object({ name: text, label: text, required: boolean, secret: boolean, hint: orNull(text) })),
          }),
        ),
      }),
    ),
    errors: [403],
  },
  'connectors.list': { summary: "The organization's connections, without values", answer: list(ref('Connection')), errors: [403] },
  'connectors.add': { summary: 'Store a credential', answer: ref('Connection'), errors: [400, 403, 404] },
  'connectors.remove': { summary: 'Remove a connection', answer: ok, errors: [400, 403, 404] },
  'environment.set': { summary: 'Set variables, all or none', answer: list(ref('EnvironmentVariable')), errors: [400, 403] },
  'environment.list': { summary: "The organization's variables, with previews", answer: list(ref('EnvironmentVariable')), errors: [403] },
  'environment.remove': { summary: 'Remove a variable', answer: ok, errors: [400, 403, 404] },
  'prompts.versions.create': {
    summary: 'Append a prompt version',
    answer: object({ id: text, version: integer }),
    errors: [400, 403, 409],
  },
  'prompts.get': {
    summary: "A prompt version's content",
    answer: object({
      id: text,
      name: text,
      version: integer,
      content: text,
      channel: orNull(text),
      channels: ref('ChannelMap'),
      createdAt: time,
      author: text,
    }),
    errors: [400, 403, 404],
  },
  'prompts.list': {
    summary: 'Up to 100 prompts, most recently changed first',
    answer: object({
      data: list(object({ id: text, name: text, latestVersion: integer, productionVersion: orNull(integer), updatedAt: time })),
    }),
    errors: [403],
  },
  'prompts.versions.list': {
    summary: 'Every version of a prompt, oldest first',
    answer: object({ data: list(object({ version: integer, author: text, createdAt: time, message: orNull(text), channels: list(text) })) }),
    errors: [400, 403, 404],
  },
  'prompts.promote': { summary: 'Point a channel at a version', answer: ok, errors: [400, 403, 404, 409] },
  'prompts.history': {
    summary: 'Every append and channel move, oldest first',
    answer: object({
      data: list({
        oneOf: [
          object({ kind: { const: 'appended' }, at: time, actor: text, actorId: text, version: integer, message: orNull(text) }),
          object({
            kind: { const: 'promoted' },
            at: time,
            actor: text,
            actorId: text,
            channel: text,
            fromVersion: orNull(integer),
            toVersion: integer,
            evidence: orNull(object({ batchId: text, scored: integer, passed: integer, passRate: orNull(number) })),
          }),
        ],
      }),
    }),
    errors: [400, 403, 404],
  },
};
