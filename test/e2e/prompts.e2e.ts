import { Answer, ApiClient } from '../support/http-client';
import { IdentityProvider, startIdentityProvider } from '../support/jwks';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectError(answer: Answer, status: number, tag: string, message?: string | RegExp): void {
  expect({ status: answer.status, body: answer.body }).toEqual({
    status,
    body: { _tag: tag, message: message === undefined ? expect.any(String) : expect.stringMatching(message) },
  });
}

describe('prompts over real HTTP', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let idp: IdentityProvider;

  const tokenFor = (organization: string, subject = 'user-42') =>
    idp.token({ org_id: organization, scope: 'prompts:read prompts:write' }, { subject, expiresIn: '10m' });

  const keyWith = async (name: string, permissions: string[]) => {
    const created = await api.call('auth.keys.create', { name, permissions });
    expect(created.status).toBe(200);
    return { client: api.withKey(created.body.key), id: created.body.id as string };
  };

  beforeAll(async () => {
    idp = await startIdentityProvider();
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ...idp.env });
    api = server.client;
  });

  afterAll(async () => {
    await server.close();
    await idp.close();
  });

  it('creates a prompt with its first version and reads it back: named after its id, latest by default', async () => {
    const created = await api.call('prompts.versions.create', { id: 'support/greeting', content: 'Hello {{name}} 👋' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: 'support/greeting', version: 1 });

    const got = await api.call('prompts.get', { id: 'support/greeting' });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: 'support/greeting',
      name: 'support/greeting',
      version: 1,
      content: 'Hello {{name}} 👋',
      channel: 'latest',
      channels: { latest: 1 },
      createdAt: expect.stringMatching(ISO),
      author: 'initial key (ASSAY_INIT_API_KEY)',
    });
    const listed = (await api.call('prompts.list')).body.data.find((prompt: { id: string }) => prompt.id === 'support/greeting');
    expect(listed).toEqual({ id: 'support/greeting', name: 'support/greeting', latestVersion: 1, productionVersion: null, updatedAt: got.body.createdAt });
  });

  it('numbers versions 1, 2, 3, keeps the newest given name, and lists every version oldest first', async () => {
    const writer = await keyWith('release-bot', ['prompts:write', 'prompts:read']);
    const id = 'agents/planner_v2-x';
    expect((await writer.client.call('prompts.versions.create', { id, content: 'one', name: 'Planner' })).body.version).toBe(1);
    expect((await writer.client.call('prompts.versions.create', { id, content: 'two', message: 'shorter' })).body.version).toBe(2);
    expect((await writer.client.call('prompts.versions.create', { id, content: 'three', name: 'Planner II' })).body.version).toBe(3);
    expect((await api.call('prompts.promote', { id, channel: 'staging', version: 2 })).body).toEqual({ ok: true });

    expect((await api.call('prompts.get', { id, version: 2 })).body).toMatchObject({
      name: 'Planner II',
      version: 2,
      content: 'two',
      channel: null,
      author: 'release-bot',
    });
    const versions = await api.call('prompts.versions.list', { id });
    expect(versions.status).toBe(200);
    expect(versions.body).toEqual({
      data: [
        { version: 1, author: 'release-bot', createdAt: expect.stringMatching(ISO), message: null, channels: [] },
        { version: 2, author: 'release-bot', createdAt: expect.stringMatching(ISO), message: 'shorter', channels: ['staging'] },
        { version: 3, author: 'release-bot', createdAt: expect.stringMatching(ISO), message: null, channels: ['latest'] },
      ],
    });
    const history = (await api.call('prompts.history', { id })).body.data;
    expect(history.map((entry: { kind: string }) => entry.kind)).toEqual(['appended', 'appended', 'appended', 'promoted']);
    expect(history[0]).toEqual({ kind: 'appended', at: expect.stringMatching(ISO), actor: 'release-bot', actorId: writer.id, version: 1, message: null });
    expect(history[3]).toEqual({
      kind: 'promoted',
      at: expect.stringMatching(ISO),
      actor: 'initial key (ASSAY_INIT_API_KEY)',
      actorId: expect.stringMatching(/^key_/),
      channel: 'staging',
      fromVersion: null,
      toVersion: 2,
      evidence: null,
    });
  });

  it('publishes: the new version goes to production, which reads become by default', async () => {
    const id = 'publish/flow';
    await api.call('prompts.versions.create', { id, content: 'draft' });
    expect((await api.call('prompts.versions.create', { id, content: 'live', publish: true })).body).toEqual({ id, version: 2 });
    await api.call('prompts.versions.create', { id, content: 'next draft', publish: false });

    const got = await api.call('prompts.get', { id });
    expect(got.body).toMatchObject({ version: 2, content: 'live', channel: 'production', channels: { production: 2, latest: 3 } });
    expect((await api.call('prompts.get', { id, channel: 'latest' })).body).toMatchObject({ version: 3, content: 'next draft', channel: 'latest' });
    const summary = (await api.call('prompts.list')).body.data.find((prompt: { id: string }) => prompt.id === id);
    expect(summary).toMatchObject({ latestVersion: 3, productionVersion: 2 });
    const moves = (await api.call('prompts.history', { id, channel: 'production' })).body.data;
    expect(moves).toEqual([expect.objectContaining({ kind: 'promoted', channel: 'production', fromVersion: null, toVersion: 2 })]);
  });

  it('promotes channels, appends nothing when the channel is already there, and refuses latest with 409', async () => {
    const id = 'promote/rules';
    await api.call('prompts.versions.create', { id, content: 'a' });
    await api.call('prompts.versions.create', { id, content: 'b' });
    expect((await api.call('prompts.promote', { id, channel: 'production', version: 1 })).body).toEqual({ ok: true });
    const before = await api.call('prompts.history', { id });
    const updatedAt = (await api.call('prompts.list')).body.data.find((prompt: { id: string }) => prompt.id === id).updatedAt;

    expect((await api.call('prompts.promote', { id, channel: 'production', version: 1 })).body).toEqual({ ok: true });
    expect((await api.call('prompts.history', { id })).body).toEqual(before.body);
    expect((await api.call('prompts.list')).body.data.find((prompt: { id: string }) => prompt.id === id).updatedAt).toBe(updatedAt);

    expectError(await api.call('prompts.promote', { id, channel: 'latest', version: 1 }), 409, 'Conflict', /"latest" is derived/);
    expectError(await api.call('prompts.promote', { id, channel: 'production', version: 3 }), 404, 'NotFound', /^Version 3 of "promote\/rules" does not exist/);
    expectError(
      await api.call('prompts.promote', { id: 'promote/none', channel: 'production', version: 1 }),
      404,
      'NotFound',
      /^Prompt "promote\/none" does not exist/,
    );
    expect((await api.call('prompts.history', { id })).body).toEqual(before.body);

    expect((await api.call('prompts.promote', { id, channel: 'constructor', version: 2 })).status).toBe(200);
    expect((await api.call('prompts.get', { id, channel: 'constructor' })).body).toMatchObject({
      version: 2,
      channels: { constructor: 2, production: 1, latest: 2 },
    });
  });

  it('reads by version, by channel and by default, with 404 and 400 answers that say what to change', async () => {
    const id = 'reads/selectors';
    await api.call('prompts.versions.create', { id, content: 'first' });
    await api.call('prompts.versions.create', { id, content: 'second' });
    expect((await api.call('prompts.get', { id, version: 1 })).body).toMatchObject({ version: 1, content: 'first', channel: null });
    expect((await api.call('prompts.get', { id, channel: 'latest' })).body).toMatchObject({ version: 2, channel: 'latest' });
    expectError(await api.call('prompts.get', { id, version: 3 }), 404, 'NotFound', /^Version 3 of "reads\/selectors" does not exist/);
    expectError(await api.call('prompts.get', { id, channel: 'beta' }), 404, 'NotFound', /Channel "beta" .* never been promoted/);
    expectError(await api.call('prompts.get', { id: 'reads/none' }), 404, 'NotFound', /^Prompt "reads\/none" does not exist/);
    expectError(await api.call('prompts.versions.list', { id: 'reads/none' }), 404, 'NotFound');
    expectError(await api.call('prompts.history', { id: 'reads/none' }), 404, 'NotFound');
    expectError(await api.call('prompts.get', { id, version: 1, channel: 'latest' }), 400, 'BadRequest', /"version" or "channel", not both/);
    expectError(
      await api.call('prompts.get', { id, version: 1, at: new Date().toISOString() }),
      400,
      'BadRequest',
      /remove "at", or give "channel" instead of "version"/,
    );
    expect((await api.call('prompts.get', { id, version: null, channel: null, at: null })).body).toMatchObject({ version: 2, channel: 'latest' });
  });

  it('filters the history by channel; latest lists the appends', async () => {
    const id = 'history/filter';
    await api.call('prompts.versions.create', { id, content: 'x', message: 'start' });
    await api.call('prompts.promote', { id, channel: 'canary', version: 1 });
    await api.call('prompts.versions.create', { id, content: 'y', publish: true });
    const kinds = async (channel?: string) =>
      (await api.call('prompts.history', channel ? { id, channel } : { id })).body.data.map(
        (entry: { kind: string; channel?: string }) => entry.channel ?? entry.kind,
      );
    expect(await kinds()).toEqual(['appended', 'canary', 'appended', 'production']);
    expect(await kinds('latest')).toEqual(['appended', 'appended']);
    expect(await kinds('canary')).toEqual(['canary']);
    expect(await kinds('never')).toEqual([]);
  });

  it('needs prompts:read to read and prompts:write to write; no credential is 401', async () => {
    const reader = (await keyWith('prompt reader', ['prompts:read'])).client;
    const other = (await keyWith('evals only', ['evals:read'])).client;
    await api.call('prompts.versions.create', { id: 'perm/check', content: 'c' });
    const reads = [
      ['prompts.list', {}],
      ['prompts.get', { id: 'perm/check' }],
      ['prompts.versions.list', { id: 'perm/check' }],
      ['prompts.history', { id: 'perm/check' }],
    ] as const;
    for (const [operation, body] of reads) {
      expect((await reader.call(operation, body)).status).toBe(200);
      expectError(await other.call(operation, body), 403, 'Forbidden', /prompts:read/);
      expectError(await api.call(operation, body, { key: null }), 401, 'Unauthorized');
    }
    expectError(await reader.call('prompts.versions.create', { id: 'perm/check', content: 'd' }), 403, 'Forbidden', /prompts:write/);
    expectError(await reader.call('prompts.promote', { id: 'perm/check', channel: 'production', version: 1 }), 403, 'Forbidden', /prompts:write/);
    expect((await api.call('prompts.versions.list', { id: 'perm/check' })).body.data).toHaveLength(1);
  });

  it("scopes prompts to the caller's organization; OAuth callers are recorded by subject", async () => {
    await api.call('prompts.versions.create', { id: 'shared/name', content: 'acme text' });
    await api.call('prompts.versions.create', { id: 'shared/name', content: 'acme text 2' });
    const globex = api.withKey(await tokenFor('globex', 'dana'));
    for (const [operation, body] of [
      ['prompts.get', { id: 'shared/name' }],
      ['prompts.versions.list', { id: 'shared/name' }],
      ['prompts.history', { id: 'shared/name' }],
      ['prompts.promote', { id: 'shared/name', channel: 'production', version: 1 }],
    ] as const) {
      expectError(await globex.call(operation, body), 404, 'NotFound');
    }
    expect((await globex.call('prompts.list')).body).toEqual({ data: [] });
    expect((await globex.call('prompts.versions.create', { id: 'shared/name', content: 'globex text', publish: true })).body).toEqual({
      id: 'shared/name',
      version: 1,
    });
    expect((await globex.call('prompts.get', { id: 'shared/name' })).body).toMatchObject({ content: 'globex text', author: 'dana', channel: 'production' });
    expect((await globex.call('prompts.history', { id: 'shared/name' })).body.data[1]).toMatchObject({ actor: 'dana', actorId: 'oauth:dana' });
    expect((await api.call('prompts.get', { id: 'shared/name' })).body).toMatchObject({
      content: 'acme text 2',
      version: 2,
      author: expect.stringContaining('initial key'),
    });
  });

  it('lists up to 100 prompts, the most recently updated first, with productionVersion null until promoted', async () => {
    const umbrella = api.withKey(await tokenFor('umbrella'));
    for (let index = 0; index < 101; index += 1) {
      if (index === 1) await new Promise((resolve) => setTimeout(resolve, 5));
      expect((await umbrella.call('prompts.versions.create', { id: `bulk/p${index}`, content: `c${index}` })).status).toBe(200);
    }
    await umbrella.call('prompts.promote', { id: 'bulk/p1', channel: 'production', version: 1 });
    const { data } = (await umbrella.call('prompts.list')).body;
    expect(data).toHaveLength(100);
    expect(data[0]).toEqual({ id: 'bulk/p1', name: 'bulk/p1', latestVersion: 1, productionVersion: 1, updatedAt: expect.stringMatching(ISO) });
    expect(data[1]).toMatchObject({ id: 'bulk/p100', productionVersion: null });
    const updated = data.map((prompt: { updatedAt: string }) => prompt.updatedAt);
    expect([...updated].sort().reverse()).toEqual(updated);
    expect(data.map((prompt: { id: string }) => prompt.id)).not.toContain('bulk/p0');
  });

  /** Fires 16 appends at once and checks the rule; answers how many appends lost a race. */
  async function raceAppends(id: string): Promise<{ won: number; conflicts: number }> {
    const append = jest.spyOn(server.runtime.eventStore, 'append');
    const answers = await Promise.all(Array.from({ length: 16 }, (_, index) => api.call('prompts.versions.create', { id, content: `racer ${index}` })));
    const appends = await Promise.allSettled(append.mock.results.map((result) => result.value));
    append.mockRestore();
    answers.filter((answer) => answer.status !== 200).forEach((answer) => expectError(answer, 409, 'Conflict'));
    const won = answers.flatMap((answer, index) => (answer.status === 200 ? [{ version: answer.body.version as number, content: `racer ${index}` }] : []));
    const numbers = won.map((winner) => winner.version).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: won.length }, (_, index) => index + 1));
    const versions = (await api.call('prompts.versions.list', { id })).body.data;
    expect(versions.map((version: { version: number }) => version.version)).toEqual(numbers);
    // Each winner's version holds exactly the content that winner sent.
    for (const winner of won) {
      expect((await api.call('prompts.get', { id, version: winner.version })).body.content).toBe(winner.content);
    }
    return { won: won.length, conflicts: appends.filter((result) => result.status === 'rejected').length };
  }

  it('gives parallel appends distinct versions, or 409; never the same number twice', async () => {
    expect((await raceAppends('race/appends')).won).toBeGreaterThan(0);
  });

  it('keeps versions distinct when a slow store lets every append read the same revision', async () => {
    const store = server.runtime.eventStore;
    const read = store.readStream.bind(store);
    const slow = jest.spyOn(store, 'readStream').mockImplementation(async (...args) => {
      const events = await read(...args);
      await new Promise((resolve) => setTimeout(resolve, 25));
      return events;
    });
    try {
      const outcome = await raceAppends('race/slow-store');
      expect(outcome.conflicts).toBeGreaterThan(0);
      expect(outcome.won).toBeGreaterThan(0);
    } finally {
      slow.mockRestore();
    }
  });
});
