import { foldEvents } from '#shared/decider';
import { given } from '../../../test/support/decider-spec';
import { Conflict, NotFound } from '#shared/errors';
import { AppendPromptVersion, PromotePromptChannel, promptDecider } from './prompt.decider';
import type { PromptEvent } from './prompt.events';

const T0 = '2025-01-01T00:00:00.000Z';
const T1 = '2025-01-01T00:01:00.000Z';
const T2 = '2025-01-01T00:02:00.000Z';
const where = { organization: 'acme', promptId: 'support/greeting' };
const who = { ...where, actor: 'release-bot', actorId: 'key_1' };

const append = (extra: Partial<AppendPromptVersion> = {}): AppendPromptVersion => ({
  type: 'AppendPromptVersion',
  ...who,
  content: 'Hello {{name}}',
  publish: false,
  now: new Date(T1),
  ...extra,
});

const promote = (channel: string, version: number, now = T1): PromotePromptChannel => ({
  type: 'PromotePromptChannel',
  ...who,
  channel,
  version,
  now: new Date(now),
});

const appended = (version: number, extra: Record<string, unknown> = {}): PromptEvent => ({
  type: 'PromptVersionAppended',
  data: { ...where, version, content: `v${version}`, name: 'support/greeting', author: 'release-bot', authorId: 'key_1', createdAt: T0, ...extra },
});

const promoted = (channel: string, fromVersion: number | null, toVersion: number, promotedAt = T1): PromptEvent => ({
  type: 'PromptChannelPromoted',
  data: { ...who, channel, fromVersion, toVersion, actor: 'release-bot', actorId: 'key_1', promotedAt },
});

describe('prompt decider', () => {
  it('appends version 1 to a new prompt, named after its id, at the command time', () => {
    given(promptDecider, [])
      .when(append())
      .then([
        {
          type: 'PromptVersionAppended',
          data: { ...where, version: 1, content: 'Hello {{name}}', name: 'support/greeting', author: 'release-bot', authorId: 'key_1', createdAt: T1 },
        },
      ]);
  });

  it('numbers the next version one above the highest, keeps the newest given name and the message', () => {
    const history = [appended(1, { name: 'Greeting' }), appended(2)];
    given(promptDecider, history)
      .when(append({ message: 'friendlier' }))
      .then([
        {
          type: 'PromptVersionAppended',
          data: {
            ...where,
            version: 3,
            content: 'Hello {{name}}',
            name: 'support/greeting',
            author: 'release-bot',
            authorId: 'key_1',
            message: 'friendlier',
            createdAt: T1,
          },
        },
      ]);
    const renamed = given(promptDecider, [appended(1, { name: 'Greeting' })]);
    renamed.when(append()).then([expect.objectContaining({ data: expect.objectContaining({ version: 2, name: 'Greeting' }) })]);
    renamed.when(append({ name: 'Welcome' })).then([expect.objectContaining({ data: expect.objectContaining({ name: 'Welcome' }) })]);
  });

  it('publishes: the append and the production move in one decision', () => {
    given(promptDecider, [appended(1), promoted('production', null, 1)])
      .when(append({ publish: true, now: new Date(T2) }))
      .then([
        expect.objectContaining({ type: 'PromptVersionAppended', data: expect.objectContaining({ version: 2, createdAt: T2 }) }),
        promoted('production', 1, 2, T2),
      ]);
  });

  it('promotes a channel, recording where it came from', () => {
    given(promptDecider, [appended(1), appended(2)])
      .when(promote('staging', 2))
      .then([promoted('staging', null, 2)]);
    given(promptDecider, [appended(1), appended(2), promoted('staging', null, 2)])
      .when(promote('staging', 1))
      .then([promoted('staging', 2, 1)]);
  });

  it('decides nothing when the channel already points at the version', () => {
    given(promptDecider, [appended(1), promoted('production', null, 1)])
      .when(promote('production', 1))
      .then([]);
  });

  it('treats a channel named like an Object member as any other channel', () => {
    given(promptDecider, [appended(1)])
      .when(promote('constructor', 1))
      .then([promoted('constructor', null, 1)]);
    given(promptDecider, [appended(1), promoted('constructor', null, 1)])
      .when(promote('constructor', 1))
      .then([]);
  });

  it('refuses a prompt or a version that does not exist with NotFound', () => {
    given(promptDecider, []).when(promote('production', 1)).thenThrows(NotFound, 'Prompt "support/greeting" does not exist.');
    given(promptDecider, [appended(1), appended(2)])
      .when(promote('production', 3))
      .thenThrows(NotFound, 'Version 3 of "support/greeting" does not exist');
  });

  it('refuses to promote the derived channel latest with Conflict', () => {
    given(promptDecider, [appended(1), appended(2)])
      .when(promote('latest', 1))
      .thenThrows(Conflict, /"latest" is derived/);
  });

  it('never records a time before the stream last one, so `at` reads a prefix of the history', () => {
    given(promptDecider, [appended(1, { createdAt: T2 })])
      .when(append({ now: new Date(T1) }))
      .then([expect.objectContaining({ data: expect.objectContaining({ version: 2, createdAt: T2 }) })]);
    given(promptDecider, [appended(1), appended(2), promoted('production', null, 1, T2)])
      .when(promote('production', 2, T1))
      .then([promoted('production', 1, 2, T2)]);
  });

  it('folds the stream into the highest version, the name and the channel pointers', () => {
    const state = foldEvents(promptDecider, [appended(1, { name: 'A' }), appended(2, { name: 'B' }), promoted('production', null, 1, T2)]);
    expect(state).toEqual({ latestVersion: 2, name: 'B', channels: { production: 1 }, lastAt: T2 });
  });
});
