import type { Answer, ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/** What a request should get: 200, or a 400 decode issue of this tag at this path. */
type Expected = 200 | { tag: 'Missing' | 'Type' | 'Refinement' | 'Unexpected'; path: Array<string | number> };
type Row = [label: string, body: Record<string, unknown>, expected: Expected];

const OK = 200 as const;
const refinement = (path: string): Expected => ({ tag: 'Refinement', path: [path] });
const type = (path: string): Expected => ({ tag: 'Type', path: [path] });
const missing = (path: string): Expected => ({ tag: 'Missing', path: [path] });
const unexpected = (path: string): Expected => ({ tag: 'Unexpected', path: [path] });

const LONG_ID = 'p'.repeat(255);
const LONG_CHANNEL = 'c'.repeat(36);
const BASE = 'bounds/base';

function expectOutcome(label: string, answer: Answer, expected: Expected): void {
  if (expected === OK) {
    expect({ label, status: answer.status, body: answer.body }).toEqual({ label, status: 200, body: answer.body });
    return;
  }
  expect({ label, status: answer.status, body: answer.body }).toEqual({
    label,
    status: 400,
    body: {
      _tag: 'HttpApiDecodeError',
      message: expect.stringContaining('does not match the expected schema'),
      issues: [{ _tag: expected.tag, path: expected.path, message: expect.any(String) }],
    },
  });
}

describe('prompt operations refuse every broken bound with 400 and accept the bound itself', () => {
  let server: InProcessServer;
  let api: ApiClient;

  const check = async (operation: string, rows: Row[]) => {
    for (const [label, body, expected] of rows) expectOutcome(`${operation}: ${label}`, await api.call(operation, body), expected);
  };

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    await api.call('prompts.versions.create', { id: BASE, content: 'one' });
    await api.call('prompts.versions.create', { id: BASE, content: 'two' });
  });

  afterAll(() => server.close());

  it('prompts.versions.create: id, content, name, message, publish and unknown properties', async () => {
    await check('prompts.versions.create', [
      ['id of 1 character', { id: 'a', content: 'x' }, OK],
      ['id of 255 characters', { id: LONG_ID, content: 'x' }, OK],
      ['id of 0 characters', { id: '', content: 'x' }, refinement('id')],
      ['id of 256 characters', { id: 'p'.repeat(256), content: 'x' }, refinement('id')],
      ['id with every allowed character', { id: '0a/b_c-d/', content: 'x' }, OK],
      ...['A', 'Upper', '-a', '/a', '_a', 'a.b', 'a b', 'a\\b', 'é'].map((id): Row => [`id ${JSON.stringify(id)}`, { id, content: 'x' }, refinement('id')]),
      ['id a number', { id: 7, content: 'x' }, type('id')],
      ['id null', { id: null, content: 'x' }, type('id')],
      ['id missing', { content: 'x' }, missing('id')],
      ['content of 1 character', { id: 'c1', content: 'x' }, OK],
      ['content of 262144 characters', { id: 'c2', content: 'x'.repeat(262144) }, OK],
      ['content of 0 characters', { id: 'c3', content: '' }, refinement('content')],
      ['content of 262145 characters', { id: 'c4', content: 'x'.repeat(262145) }, refinement('content')],
      ['content an object', { id: 'c5', content: { text: 'x' } }, type('content')],
      ['content missing', { id: 'c6' }, missing('content')],
      ['name of 1 character', { id: 'n1', content: 'x', name: 'n' }, OK],
      ['name of 200 characters', { id: 'n2', content: 'x', name: 'n'.repeat(200) }, OK],
      ['name null (not given)', { id: 'n3', content: 'x', name: null }, OK],
      ['name of 0 characters', { id: 'n4', content: 'x', name: '' }, refinement('name')],
      ['name of 201 characters', { id: 'n5', content: 'x', name: 'n'.repeat(201) }, refinement('name')],
      ['name a number', { id: 'n6', content: 'x', name: 3 }, type('name')],
      ['message of 1 character', { id: 'm1', content: 'x', message: 'm' }, OK],
      ['message of 2000 characters', { id: 'm2', content: 'x', message: 'm'.repeat(2000) }, OK],
      ['message of 0 characters', { id: 'm3', content: 'x', message: '' }, refinement('message')],
      ['message of 2001 characters', { id: 'm4', content: 'x', message: 'm'.repeat(2001) }, refinement('message')],
      ['publish true', { id: 'b1', content: 'x', publish: true }, OK],
      ['publish false', { id: 'b2', content: 'x', publish: false }, OK],
      ['publish "true"', { id: 'b3', content: 'x', publish: 'true' }, type('publish')],
      ['publish 1', { id: 'b4', content: 'x', publish: 1 }, type('publish')],
      ['a misspelt publish', { id: 'b5', content: 'x', publsh: true }, unexpected('publsh')],
    ]);
    expect((await api.call('prompts.get', { id: 'c2' })).body.content).toHaveLength(262144);
    expect((await api.call('prompts.get', { id: 'n3' })).body.name).toBe('n3');
    for (const refused of ['c3', 'c4', 'n4', 'b3', 'b5']) expect((await api.call('prompts.get', { id: refused })).status).toBe(404);
  });

  it('prompts.promote: channel, id and version, as the spec says; extras are dropped', async () => {
    await check('prompts.promote', [
      ['channel of 1 character', { id: BASE, channel: 'a', version: 1 }, OK],
      ['channel of 36 characters', { id: BASE, channel: LONG_CHANNEL, version: 1 }, OK],
      ['channel with every allowed character', { id: BASE, channel: '0x_y-z', version: 2 }, OK],
      ['channel of 0 characters', { id: BASE, channel: '', version: 1 }, refinement('channel')],
      ['channel of 37 characters', { id: BASE, channel: 'c'.repeat(37), version: 1 }, refinement('channel')],
      ...['Prod', '-x', '_x', 'a/b', 'a.b', 'a b'].map((channel): Row => [
        `channel ${JSON.stringify(channel)}`,
        { id: BASE, channel, version: 1 },
        refinement('channel'),
      ]),
      ['channel a number', { id: BASE, channel: 1, version: 1 }, type('channel')],
      ['channel missing', { id: BASE, version: 1 }, missing('channel')],
      ['id of 255 characters', { id: LONG_ID, channel: 'production', version: 1 }, OK],
      ['id of 256 characters', { id: 'p'.repeat(256), channel: 'production', version: 1 }, refinement('id')],
      ['id "Base"', { id: 'Base', channel: 'production', version: 1 }, refinement('id')],
      ['id missing', { channel: 'production', version: 1 }, missing('id')],
      ['version 1', { id: BASE, channel: 'v', version: 1 }, OK],
      ['version 0', { id: BASE, channel: 'v', version: 0 }, refinement('version')],
      ['version -1', { id: BASE, channel: 'v', version: -1 }, refinement('version')],
      ['version 1.5', { id: BASE, channel: 'v', version: 1.5 }, type('version')],
      ['version "1"', { id: BASE, channel: 'v', version: '1' }, type('version')],
      ['version null', { id: BASE, channel: 'v', version: null }, type('version')],
      ['version missing', { id: BASE, channel: 'v' }, missing('version')],
      ['an extra property', { id: BASE, channel: 'extra', version: 2, note: 'dropped' }, OK],
    ]);
    expect((await api.call('prompts.get', { id: BASE, channel: LONG_CHANNEL })).body).toMatchObject({ version: 1, channel: LONG_CHANNEL });
  });

  it('prompts.get: id, version, channel, at and unknown properties', async () => {
    await check('prompts.get', [
      ['id of 255 characters', { id: LONG_ID }, OK],
      ['id of 256 characters', { id: 'p'.repeat(256) }, refinement('id')],
      ['id of 0 characters', { id: '' }, refinement('id')],
      ['id missing', {}, missing('id')],
      ['version 1', { id: BASE, version: 1 }, OK],
      ['version 0', { id: BASE, version: 0 }, refinement('version')],
      ['version 1.5', { id: BASE, version: 1.5 }, type('version')],
      ['channel of 36 characters', { id: BASE, channel: LONG_CHANNEL }, OK],
      ['channel of 37 characters', { id: BASE, channel: 'c'.repeat(37) }, refinement('channel')],
      ['channel "Latest"', { id: BASE, channel: 'Latest' }, refinement('channel')],
      ['at in UTC', { id: BASE, at: '2999-01-01T00:00:00.000Z' }, OK],
      ['at without seconds', { id: BASE, at: '2999-01-01T00:00Z' }, OK],
      ['at with an offset and microseconds', { id: BASE, at: '2999-01-01T02:00:00.123456+02:00' }, OK],
      ['at a date only', { id: BASE, at: '2025-01-01' }, refinement('at')],
      ['at without a zone', { id: BASE, at: '2025-01-01T00:00:00' }, refinement('at')],
      ['at with a space', { id: BASE, at: '2025-01-01 00:00:00Z' }, refinement('at')],
      ['at February 30th', { id: BASE, at: '2025-02-30T00:00:00Z' }, refinement('at')],
      ['at "yesterday"', { id: BASE, at: 'yesterday' }, refinement('at')],
      ['at epoch milliseconds', { id: BASE, at: 1735689600000 }, type('at')],
      ['a misspelt version', { id: BASE, verison: 1 }, unexpected('verison')],
    ]);
  });

  it('prompts.versions.list, prompts.history and prompts.list', async () => {
    await check('prompts.versions.list', [
      ['id of 255 characters', { id: LONG_ID }, OK],
      ['id of 256 characters', { id: 'p'.repeat(256) }, refinement('id')],
      ['id "a..b"', { id: 'a..b' }, refinement('id')],
      ['id missing', {}, missing('id')],
      ['an unknown property', { id: BASE, channel: 'production' }, unexpected('channel')],
    ]);
    await check('prompts.history', [
      ['id of 255 characters', { id: LONG_ID }, OK],
      ['id of 256 characters', { id: 'p'.repeat(256) }, refinement('id')],
      ['channel of 36 characters', { id: BASE, channel: LONG_CHANNEL }, OK],
      ['channel of 37 characters', { id: BASE, channel: 'c'.repeat(37) }, refinement('channel')],
      ['channel "A"', { id: BASE, channel: 'A' }, refinement('channel')],
      ['a misspelt channel', { id: BASE, chanel: 'production' }, unexpected('chanel')],
    ]);
    await check('prompts.list', [
      ['an empty body', {}, OK],
      ['an extra property (the spec takes {})', { limit: 5 }, OK],
    ]);
  });

  it('answers a body that is not an object with the spec error shape', async () => {
    const answer = await api.call('prompts.versions.create', undefined, { rawBody: '[1, 2]' });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ _tag: 'HttpApiDecodeError', message: expect.any(String), issues: [{ _tag: 'Type', path: [], message: expect.any(String) }] });
  });
});
