import { Answer, ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, keyFor, startInProcess } from '../support/servers';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const OPENAI = { integrationId: 'openai-compatible', authMethodId: 'api-key' };

function expectDecodeIssue(answer: Answer, path: Array<string | number>, tag: string): void {
  expect(answer.status).toBe(400);
  expect(answer.body._tag).toBe('HttpApiDecodeError');
  expect(answer.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ _tag: tag, path })]));
}

function expectError(answer: Answer, status: number, tag: string): void {
  expect({ status: answer.status, tag: answer.body?._tag }).toEqual({ status, tag });
  expect(typeof answer.body.message).toBe('string');
}

/** A key of any organization, issued straight into the log (as `assay keys create` does). */
describe('connectors over real HTTP', () => {
  let server: InProcessServer;
  let api: ApiClient;

  const add = (body: Record<string, unknown>, client = api) =>
    client.call('connectors.add', { ...OPENAI, name: 'gateway', values: { apiKey: 'sk-test-0123456789', baseUrl: 'https://llm.example/v1' }, ...body });
  const list = async (client = api) => {
    const answer = await client.call('connectors.list');
    expect(answer.status).toBe(200);
    return answer.body as Array<Record<string, any>>;
  };

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  it('lists the integration catalogue: every harness kind, every sandbox kind and model providers', async () => {
    const answer = await api.call('connectors.integrations', {});
    expect(answer.status).toBe(200);
    const integrations = answer.body as Array<Record<string, any>>;
    const ids = (category: string) => integrations.filter((i) => i.category === category).map((i) => i.id);
    expect(ids('harness')).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => `harness_kind_${n}`));
    expect(ids('sandbox')).toEqual([1, 2, 3, 4, 5, 6].map((n) => `sandbox_kind_${n}`));
    expect(ids('model')).toContain('openai-compatible');
    for (const integration of integrations) {
      expect(Object.keys(integration).sort()).toEqual(['authMethods', 'category', 'id', 'label']);
      for (const method of integration.authMethods) {
        expect(method).toEqual({ id: expect.any(String), kind: 'secret', label: expect.any(String), fields: expect.any(Array) });
        for (const field of method.fields) {
          expect(field).toEqual({
            label: expect.any(String),
            name: expect.any(String),
            required: expect.any(Boolean),
            secret: expect.any(Boolean),
            hint: expect.any(String),
          });
        }
      }
    }
    // The providers simulated users and judges call take their key from these.
    expect(ids('model')).toEqual(expect.arrayContaining(['openai', 'anthropic', 'openai-compatible']));
    for (const id of ['openai', 'anthropic']) {
      const method = integrations.find((i) => i.id === id)!.authMethods.find((m: any) => m.id === 'api-key');
      expect(method.fields).toEqual([expect.objectContaining({ name: 'apiKey', required: true, secret: true })]);
    }
    const openai = integrations.find((i) => i.id === 'openai-compatible')!;
    const fields = openai.authMethods[0].fields;
    expect(fields.find((f: any) => f.name === 'apiKey')).toMatchObject({ required: true, secret: true });
    expect(fields.find((f: any) => f.name === 'baseUrl')).toMatchObject({ secret: false });
  });

  it('adds a connection and answers it without its values; the list never shows them either', async () => {
    const answer = await add({ name: 'team gateway' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: expect.stringMatching(/^con_/),
      integrationId: 'openai-compatible',
      authMethodId: 'api-key',
      name: 'team gateway',
      isDefault: false,
      scope: 'organization',
      status: 'active',
      createdAt: expect.stringMatching(ISO),
      lastUsedAt: null,
    });
    expect(answer.text).not.toContain('sk-test-0123456789');
    const listed = await list();
    expect(listed).toContainEqual(answer.body);
    const text = JSON.stringify(listed);
    expect(text).not.toContain('sk-test-0123456789');
    expect(text).not.toContain('llm.example');
  });

  it('takes a name of 1 to 80 characters', async () => {
    expect((await add({ name: 'n'.repeat(80) })).status).toBe(200);
    expect((await add({ name: 'n' })).status).toBe(200);
    expectDecodeIssue(await add({ name: 'n'.repeat(81) }), ['name'], 'Refinement');
    expectDecodeIssue(await add({ name: '' }), ['name'], 'Refinement');
    expectDecodeIssue(await add({ name: undefined }), ['name'], 'Missing');
  });

  it('answers 404 for an unknown integration or auth method', async () => {
    expectError(await add({ integrationId: 'no-such-integration' }), 404, 'NotFound');
    expectError(await add({ authMethodId: 'oauth' }), 404, 'NotFound');
    expectError(await add({ integrationId: 'harness_kind_9', authMethodId: 'api-key' }), 404, 'NotFound');
  });

  it('answers 400 naming the field when a required one is missing or an unknown one is given', async () => {
    const missing = await add({ values: { baseUrl: 'https://llm.example/v1' } });
    expectDecodeIssue(missing, ['values', 'apiKey'], 'Missing');
    expect(missing.body.message).toContain('apiKey');
    const unknown = await add({ values: { apiKey: 'sk-x-123456', baseUrl: 'https://x', organizationId: 'o' } });
    expectDecodeIssue(unknown, ['values', 'organizationId'], 'Unexpected');
    expect(unknown.body.message).toContain('organizationId');
    expectDecodeIssue(await add({ values: { apiKey: '', baseUrl: 'https://x' } }), ['values', 'apiKey'], 'Refinement');
    expectDecodeIssue(await add({ values: { apiKey: 42, baseUrl: 'https://x' } }), ['values'], 'Type');
    expectDecodeIssue(await add({ values: undefined }), ['values'], 'Missing');
    // An optional field may be left out.
    const harness = await api.call('connectors.add', {
      integrationId: 'harness_kind_3',
      authMethodId: 'api-key',
      name: 'h3',
      values: { apiKey: 'sk-h3-0000000000' },
    });
    expect(harness.status).toBe(200);
  });

  it('takes field values of 1 to 32768 characters, and never echoes one in an error', async () => {
    expect((await add({ values: { apiKey: 'k'.repeat(32768), baseUrl: 'https://x' } })).status).toBe(200);
    const tooLong = await add({ values: { apiKey: 'SECRETPREFIX' + 'k'.repeat(32757), baseUrl: 'https://x' } });
    expectDecodeIssue(tooLong, ['values', 'apiKey'], 'Refinement');
    expect(tooLong.text).not.toContain('SECRETPREFIX');
  });

  it('refuses unknown properties, a wrong scope and a personal default', async () => {
    expectDecodeIssue(await add({ default: true }), ['default'], 'Unexpected');
    expectDecodeIssue(await add({ scope: 'team' }), ['scope'], 'Type');
    expectDecodeIssue(await add({ isDefault: 'yes' }), ['isDefault'], 'Type');
    expectError(await add({ scope: 'personal', isDefault: true }), 400, 'BadRequest');
  });

  it('makes a connection the default of its integration, unsetting the previous one only there', async () => {
    const first = (
      await add({ integrationId: 'harness_kind_1', authMethodId: 'api-key', name: 'first', values: { apiKey: 'sk-1-aaaaaaaaaaaa' }, isDefault: true })
    ).body;
    const other = (
      await add({ integrationId: 'harness_kind_2', authMethodId: 'api-key', name: 'other', values: { apiKey: 'sk-2-bbbbbbbbbbbb' }, isDefault: true })
    ).body;
    expect(first.isDefault).toBe(true);
    const second = (
      await add({ integrationId: 'harness_kind_1', authMethodId: 'api-key', name: 'second', values: { apiKey: 'sk-1-cccccccccccc' }, isDefault: true })
    ).body;
    const byId = new Map((await list()).map((connection) => [connection.id, connection]));
    expect(byId.get(first.id)!.isDefault).toBe(false);
    expect(byId.get(second.id)!.isDefault).toBe(true);
    expect(byId.get(other.id)!.isDefault).toBe(true);
    const notDefault = (await add({ integrationId: 'harness_kind_1', authMethodId: 'api-key', name: 'third', values: { apiKey: 'sk-1-dddddddddddd' } })).body;
    const after = new Map((await list()).map((connection) => [connection.id, connection]));
    expect(after.get(second.id)!.isDefault).toBe(true);
    expect(after.get(notDefault.id)!.isDefault).toBe(false);
  });

  it('shows a personal connection to its owner only, and lets only the owner remove it', async () => {
    const mine = (await add({ name: 'my own', scope: 'personal' })).body;
    expect(mine.scope).toBe('personal');
    expect((await list()).map((c) => c.id)).toContain(mine.id);
    const colleague = await keyFor(server, 'acme', ['connectors:read', 'connectors:write'], 'colleague');
    expect((await list(colleague)).map((c) => c.id)).not.toContain(mine.id);
    expectError(await colleague.call('connectors.remove', { id: mine.id }), 404, 'NotFound');
    expect((await api.call('connectors.remove', { id: mine.id })).body).toEqual({ ok: true });
  });

  it('removes a connection with {ok: true}, then answers 404 for it', async () => {
    const added = (await add({ name: 'to remove' })).body;
    const removed = await api.call('connectors.remove', { id: added.id });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ ok: true });
    expect((await list()).map((c) => c.id)).not.toContain(added.id);
    expectError(await api.call('connectors.remove', { id: added.id }), 404, 'NotFound');
    expectError(await api.call('connectors.remove', { id: 'con_unknown' }), 404, 'NotFound');
    expectDecodeIssue(await api.call('connectors.remove', {}), ['id'], 'Missing');
    expectDecodeIssue(await api.call('connectors.remove', { id: added.id, force: true }), ['force'], 'Unexpected');
  });

  it("keeps organizations apart: another organization's connection is neither listed nor removable", async () => {
    const globex = await keyFor(server, 'globex', ['connectors:read', 'connectors:write']);
    const theirs = (await add({ name: 'globex gateway' }, globex)).body;
    expect((await list()).map((c) => c.id)).not.toContain(theirs.id);
    expectError(await api.call('connectors.remove', { id: theirs.id }), 404, 'NotFound');
    expect((await list(globex)).map((c) => c.id)).toEqual([theirs.id]);
  });

  it('needs connectors:read to read and connectors:write to change', async () => {
    const reader = await keyFor(server, 'acme', ['connectors:read']);
    const stranger = await keyFor(server, 'acme', ['environment:read']);
    expect((await reader.call('connectors.integrations')).status).toBe(200);
    expect((await reader.call('connectors.list')).status).toBe(200);
    expectError(await add({}, reader), 403, 'Forbidden');
    expectError(await reader.call('connectors.remove', { id: 'con_x' }), 403, 'Forbidden');
    expectError(await stranger.call('connectors.integrations'), 403, 'Forbidden');
    expectError(await stranger.call('connectors.list'), 403, 'Forbidden');
    expectError(await api.call('connectors.list', {}, { key: null }), 401, 'Unauthorized');
    expectError(await api.call('connectors.add', {}, { key: null }), 401, 'Unauthorized');
  });
});
