import type { ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

const ID = 'travel/assistant';
const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
const before = (iso: string) => new Date(Date.parse(iso) - 1).toISOString();

/** The same instant written with a +02:00 offset. */
function withOffset(iso: string): string {
  const shifted = new Date(Date.parse(iso) + 2 * 3600 * 1000).toISOString();
  return shifted.replace('Z', '+02:00');
}

describe('prompts.get at an instant: time travel over the promotion history', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let start: string;
  /** The recorded times: appends a1..a3, production moves p1 (→1), p2 (→2), p3 (→1 again), staging s1 (→3). */
  const t: Record<'a1' | 'a2' | 'p1' | 'p2' | 'p3' | 'a3' | 's1', string> = {} as never;

  const read = async (body: Record<string, unknown>) => {
    const answer = await api.call('prompts.get', { id: ID, ...body });
    return answer.status === 200 ? { version: answer.body.version, channel: answer.body.channel, content: answer.body.content } : answer.body;
  };
  const version = (v: number, channel: string) => ({ version: v, channel, content: `text ${v}` });

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    start = new Date().toISOString();
    const steps: Array<[string, Record<string, unknown>]> = [
      ['prompts.versions.create', { content: 'text 1' }],
      ['prompts.versions.create', { content: 'text 2' }],
      ['prompts.promote', { channel: 'production', version: 1 }],
      ['prompts.promote', { channel: 'production', version: 2 }],
      ['prompts.promote', { channel: 'production', version: 1 }],
      ['prompts.versions.create', { content: 'text 3' }],
      ['prompts.promote', { channel: 'staging', version: 3 }],
    ];
    for (const [operation, body] of steps) {
      await pause();
      expect((await api.call(operation, { id: ID, ...body })).status).toBe(200);
    }
    const history = (await api.call('prompts.history', { id: ID })).body.data as Array<{ at: string }>;
    (['a1', 'a2', 'p1', 'p2', 'p3', 'a3', 's1'] as const).forEach((name, index) => (t[name] = history[index].at));
  });

  afterAll(() => server.close());

  it('records strictly increasing times, one per step', () => {
    const times = Object.values(t);
    expect(times).toHaveLength(7);
    expect([...new Set(times)].sort()).toEqual(times);
    expect(start < t.a1).toBe(true);
  });

  it('answers 404 before the prompt existed, whatever the channel', async () => {
    for (const channel of [undefined, 'production', 'latest']) {
      const answer = await api.call('prompts.get', { id: ID, at: before(t.a1), ...(channel ? { channel } : {}) });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ _tag: 'NotFound', message: `Prompt "${ID}" did not exist at ${before(t.a1)}: its first version was appended at ${t.a1}.` });
    }
  });

  it('answers 404 for a channel before its first promotion, and latest meanwhile by default', async () => {
    expect(await read({ at: before(t.p1), channel: 'production' })).toEqual({
      _tag: 'NotFound',
      message: `Channel "production" of "${ID}" pointed at no version at ${before(t.p1)}: it had not been promoted yet.`,
    });
    expect(await read({ at: before(t.s1), channel: 'staging' })).toMatchObject({ _tag: 'NotFound' });
    expect(await read({ at: t.a1 })).toEqual(version(1, 'latest'));
    expect(await read({ at: before(t.a2) })).toEqual(version(1, 'latest'));
    expect(await read({ at: before(t.p1) })).toEqual(version(2, 'latest'));
  });

  it('promote 1, then 2, then 1 again: each instant answers what production pointed at', async () => {
    const expectations: Array<[string, number]> = [
      [t.p1, 1],
      [before(t.p2), 1],
      [t.p2, 2],
      [before(t.p3), 2],
      [t.p3, 1],
      [t.s1, 1],
      ['2999-01-01T00:00:00.000Z', 1],
    ];
    for (const [at, expected] of expectations) {
      expect({ at, answer: await read({ at, channel: 'production' }) }).toEqual({ at, answer: version(expected, 'production') });
      expect({ at, answer: await read({ at }) }).toEqual({ at, answer: version(expected, 'production') });
    }
    expect(await read({ at: withOffset(t.p2), channel: 'production' })).toEqual(version(2, 'production'));
    expect(await read({ at: withOffset(before(t.p2)), channel: 'production' })).toEqual(version(1, 'production'));
  });

  it('reads latest and other channels as they were, and the channel map with them', async () => {
    expect(await read({ at: before(t.a3), channel: 'latest' })).toEqual(version(2, 'latest'));
    expect(await read({ at: t.a3, channel: 'latest' })).toEqual(version(3, 'latest'));
    expect(await read({ at: t.s1, channel: 'staging' })).toEqual(version(3, 'staging'));
    const between = await api.call('prompts.get', { id: ID, at: before(t.p3) });
    expect(between.body.channels).toEqual({ production: 2, latest: 2 });
    const atEnd = await api.call('prompts.get', { id: ID, at: t.s1 });
    const now = await api.call('prompts.get', { id: ID });
    expect(atEnd.body).toEqual(now.body);
    expect(now.body).toMatchObject({ version: 1, channel: 'production', channels: { production: 1, staging: 3, latest: 3 }, createdAt: t.a1 });
  });

  it('keeps the whole promotion history, oldest first, with every move', async () => {
    const moves = (await api.call('prompts.history', { id: ID, channel: 'production' })).body.data;
    expect(moves.map((move: { fromVersion: number | null; toVersion: number; at: string }) => [move.fromVersion, move.toVersion, move.at])).toEqual([
      [null, 1, t.p1],
      [1, 2, t.p2],
      [2, 1, t.p3],
    ]);
  });
});
