import { Answer, ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, keyFor, startInProcess } from '../support/servers';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectDecodeIssue(answer: Answer, path: Array<string | number>, tag: string): void {
  expect(answer.status).toBe(400);
  expect(answer.body._tag).toBe('HttpApiDecodeError');
  expect(answer.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ _tag: tag, path })]));
}

function expectError(answer: Answer, status: number, tag: string): void {
  expect({ status: answer.status, tag: answer.body?._tag }).toEqual({ status, tag });
}

describe('environment variables over real HTTP', () => {
  let server: InProcessServer;
  let api: ApiClient;

  const set = (variables: unknown[], client = api) => client.call('environment.set', { variables });
  const one = async (variable: Record<string, unknown>) => {
    const answer = await set([variable]);
    expect(answer.status).toBe(200);
    return answer.body[0] as Record<string, any>;
  };
  const list = async (client = api) => {
    const answer = await client.call('environment.list', {});
    expect(answer.status).toBe(200);
    return answer.body as Array<Record<string, any>>;
  };

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  it('sets variables and answers them with previews, secret by default', async () => {
    const answer = await set([
      { name: 'DATABASE_URL', value: 'postgres://db.internal:5432/app', secret: false },
      { name: 'STRIPE_KEY', value: 'sk_live_abcdefghijklmnop1234' },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      {
        id: expect.stringMatching(/^env_/),
        name: 'DATABASE_URL',
        preview: 'postgres://db.internal:5432/app',
        revision: 1,
        scope: 'organization',
        secret: false,
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        lastUsedAt: null,
      },
      expect.objectContaining({ name: 'STRIPE_KEY', preview: '••••1234', secret: true, revision: 1, lastUsedAt: null }),
    ]);
    expect(answer.text).not.toContain('sk_live_abcdefghijklmnop1234');
  });

  it('previews a plain value as it is, cut at 64 characters with "…"', async () => {
    expect((await one({ name: 'PLAIN_64', value: 'p'.repeat(64), secret: false })).preview).toBe('p'.repeat(64));
    expect((await one({ name: 'PLAIN_65', value: 'q'.repeat(64) + 'r', secret: false })).preview).toBe('q'.repeat(64) + '…');
    expect((await one({ name: 'PLAIN_1', value: 'x', secret: false })).preview).toBe('x');
  });

  it('previews a secret under 20 characters as dots, a longer one as dots and its last 4', async () => {
    expect((await one({ name: 'SECRET_19', value: 'abcdefghijklmnopqrs', secret: true })).preview).toBe('••••••••');
    expect((await one({ name: 'SECRET_20', value: 'abcdefghijklmnopWXYZ', secret: true })).preview).toBe('••••WXYZ');
    expect((await one({ name: 'SECRET_8', value: 'abcdefgh' })).preview).toBe('••••••••');
  });

  it('refuses a secret value under 8 characters with 400 naming the variable, and stores nothing of the request', async () => {
    const before = await list();
    const answer = await set([
      { name: 'LONG_ENOUGH', value: 'long-enough-value' },
      { name: 'SHORT_TOKEN', value: 'hunter2' },
    ]);
    expectDecodeIssue(answer, ['variables', 1, 'value'], 'Refinement');
    expect(answer.body.message).toContain('SHORT_TOKEN');
    expect(answer.text).not.toContain('hunter2');
    expect(await list()).toEqual(before);
    // Exactly 8 is a secret; a short value that is not secret is a setting like any other.
    expect(
      (
        await set([
          { name: 'EIGHT_TOKEN', value: 'hunter22' },
          { name: 'SHORT_PLAIN', value: 'on', secret: false },
        ])
      ).status,
    ).toBe(200);
  });

  it('replaces an existing name, keeping its id and creation time and incrementing its revision', async () => {
    const first = await one({ name: 'ROTATING_TOKEN', value: 'first-value-0000000000' });
    const second = await one({ name: 'ROTATING_TOKEN', value: 'second-value-111111111', secret: false });
    const third = await one({ name: 'ROTATING_TOKEN', value: 'third-value-2222222222' });
    expect(second).toMatchObject({ id: first.id, createdAt: first.createdAt, revision: 2, secret: false, preview: 'second-value-111111111' });
    expect(third).toMatchObject({ id: first.id, createdAt: first.createdAt, revision: 3, secret: true, preview: '••••2222' });
    expect(third.updatedAt >= first.updatedAt).toBe(true);
    expect((await list()).find((v) => v.name === 'ROTATING_TOKEN')).toEqual(third);
  });

  it('takes names of the pattern, up to 128 characters, not starting with ASSAY_', async () => {
    expect((await set([{ name: 'N'.repeat(128), value: 'v', secret: false }])).status).toBe(200);
    expect((await set([{ name: '_UNDERSCORE_1', value: 'v', secret: false }])).status).toBe(200);
    expect((await set([{ name: 'ASSAY', value: 'v', secret: false }])).status).toBe(200);
    expectDecodeIssue(await set([{ name: 'N'.repeat(129), value: 'v' }]), ['variables', 0, 'name'], 'Refinement');
    expectDecodeIssue(await set([{ name: 'ASSAY_TOKEN', value: 'v' }]), ['variables', 0, 'name'], 'Refinement');
    expectDecodeIssue(await set([{ name: 'lower_case', value: 'v' }]), ['variables', 0, 'name'], 'Refinement');
    expectDecodeIssue(await set([{ name: '1ST', value: 'v' }]), ['variables', 0, 'name'], 'Refinement');
    expectDecodeIssue(await set([{ name: 'WITH-DASH', value: 'v' }]), ['variables', 0, 'name'], 'Refinement');
    expectDecodeIssue(await set([{ name: '', value: 'v' }]), ['variables', 0, 'name'], 'Refinement');
    expectDecodeIssue(await set([{ value: 'v' }]), ['variables', 0, 'name'], 'Missing');
  });

  it.each(['PATH', 'HOME', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'ASSAY_TOKEN', 'BASH_ENV', 'NODE_OPTIONS', 'GLIBC_TUNABLES', 'TMPDIR'])(
    'refuses the reserved name %s with 400 naming it, and stores nothing',
    async (name) => {
      const answer = await set([
        { name: 'FINE_NAME_BESIDE', value: 'v' },
        { name, value: '/somewhere' },
      ]);
      expectDecodeIssue(answer, ['variables', 1, 'name'], 'Refinement');
      const issue = answer.body.issues.find((entry: { path: unknown[] }) => entry.path[1] === 1);
      expect(issue.message).toContain(`"${name}" is a reserved environment variable name`);
      expect((await list()).map((v) => v.name)).not.toEqual(expect.arrayContaining([name]));
      expect((await list()).map((v) => v.name)).not.toContain('FINE_NAME_BESIDE');
    },
  );

  it('takes names that only resemble reserved ones', async () => {
    expect(
      (
        await set([
          { name: 'PATH_PREFIX', value: 'v', secret: false },
          { name: 'MY_HOME', value: 'v', secret: false },
          { name: 'LDAP_URL', value: 'v', secret: false },
        ])
      ).status,
    ).toBe(200);
  });

  it('takes values of 1 to 32768 characters, and never echoes one in an error', async () => {
    expect((await set([{ name: 'LONG_VALUE', value: 'v'.repeat(32768) }])).status).toBe(200);
    const tooLong = await set([{ name: 'TOO_LONG', value: 'LEAKPREFIX' + 'v'.repeat(32759) }]);
    expectDecodeIssue(tooLong, ['variables', 0, 'value'], 'Refinement');
    expect(tooLong.text).not.toContain('LEAKPREFIX');
    expectDecodeIssue(await set([{ name: 'EMPTY', value: '' }]), ['variables', 0, 'value'], 'Refinement');
    expectDecodeIssue(await set([{ name: 'NUMBER', value: 42 }]), ['variables', 0, 'value'], 'Type');
    expectDecodeIssue(await set([{ name: 'NO_VALUE' }]), ['variables', 0, 'value'], 'Missing');
    expectDecodeIssue(await set([{ name: 'FLAG', value: 'v', secret: 'yes' }]), ['variables', 0, 'secret'], 'Type');
    expect((await list()).map((v) => v.name)).not.toContain('TOO_LONG');
  });

  it('takes at most 100 variables per request', async () => {
    const variables = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => ({ name: `${prefix}_${i}`, value: `secret-value-${i}` }));
    const hundred = await set(variables(100, 'BULK'));
    expect(hundred.status).toBe(200);
    expect(hundred.body).toHaveLength(100);
    expectDecodeIssue(await set(variables(101, 'OVER')), ['variables'], 'Refinement');
    expectDecodeIssue(await set([]), ['variables'], 'Refinement');
    expectDecodeIssue(await api.call('environment.set', {}), ['variables'], 'Missing');
    expect((await list()).filter((v) => v.name.startsWith('OVER_'))).toEqual([]);
  });

  it('refuses a name given twice in one request, and sets nothing of it', async () => {
    const answer = await set([
      { name: 'TWICE', value: 'a' },
      { name: 'ONCE', value: 'b' },
      { name: 'TWICE', value: 'c' },
    ]);
    expectDecodeIssue(answer, ['variables', 2, 'name'], 'Refinement');
    expect(answer.body.message).toContain('TWICE');
    expect((await list()).map((v) => v.name)).not.toContain('ONCE');
  });

  it('refuses unknown properties', async () => {
    expectDecodeIssue(await set([{ name: 'TYPO', value: 'v', secert: false }]), ['variables', 0, 'secert'], 'Unexpected');
    expectDecodeIssue(await api.call('environment.set', { variables: [{ name: 'A', value: 'v' }], scope: 'x' }), ['scope'], 'Unexpected');
  });

  it('lists the variables by name without values, and removes one', async () => {
    await set([
      { name: 'ZZ_LAST', value: 'zz-secret-value-000000' },
      { name: 'AA_FIRST', value: 'aa', secret: false },
    ]);
    const listed = await list();
    const names = listed.map((v) => v.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['AA_FIRST', 'ZZ_LAST']));
    expect(JSON.stringify(listed)).not.toContain('zz-secret-value-000000');
    expect((await api.call('environment.remove', { name: 'ZZ_LAST' })).body).toEqual({ ok: true });
    expect((await list()).map((v) => v.name)).not.toContain('ZZ_LAST');
    expectError(await api.call('environment.remove', { name: 'ZZ_LAST' }), 404, 'NotFound');
    expectError(await api.call('environment.remove', { name: 'NEVER_SET' }), 404, 'NotFound');
    expectDecodeIssue(await api.call('environment.remove', {}), ['name'], 'Missing');
    // Set again after removal: a new variable, revision 1.
    expect(await one({ name: 'ZZ_LAST', value: 'again-secret-000' })).toMatchObject({ revision: 1 });
  });

  it('keeps organizations apart', async () => {
    const globex = await keyFor(server, 'globex', ['environment:read', 'environment:write']);
    expect((await set([{ name: 'GLOBEX_ONLY', value: 'globex-secret-value' }], globex)).status).toBe(200);
    expect((await list()).map((v) => v.name)).not.toContain('GLOBEX_ONLY');
    expect((await list(globex)).map((v) => v.name)).toEqual(['GLOBEX_ONLY']);
    expectError(await api.call('environment.remove', { name: 'GLOBEX_ONLY' }), 404, 'NotFound');
  });

  it('needs environment:read to list and environment:write to change', async () => {
    const reader = await keyFor(server, 'acme', ['environment:read']);
    const stranger = await keyFor(server, 'acme', ['connectors:read']);
    expect((await reader.call('environment.list')).status).toBe(200);
    expectError(await set([{ name: 'NOPE', value: 'v' }], reader), 403, 'Forbidden');
    expectError(await reader.call('environment.remove', { name: 'AA_FIRST' }), 403, 'Forbidden');
    expectError(await stranger.call('environment.list'), 403, 'Forbidden');
    expectError(await api.call('environment.list', {}, { key: null }), 401, 'Unauthorized');
  });
});
