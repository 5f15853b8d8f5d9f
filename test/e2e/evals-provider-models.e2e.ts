import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, startInProcess, tempDir } from '../support/servers';

const CONFIG = `
providers:
  openai: { protocol: openai, apiKeyEnv: PROVIDER_MODELS_TEST_KEY, models: [gpt-5.4, gpt-5.4-mini] }
  local: { protocol: openai-compatible, baseURL: "http://127.0.0.1:9/v1" }
  claude: { protocol: anthropic, models: [claude-haiku-4-5] }
users: { default: openai, harness_kind_2: claude }
judges: { provider: local, model: qwen3-coder }
`;

const through = (name: string, protocol: string) => `Through the "${name}" provider (${protocol}): for simulated users and judges`;

/** evals.models.list shows the models of the providers in ASSAY_CONFIG after the harness's own. */
describe('evals.models.list with configured model providers', () => {
  let server: InProcessServer;
  let api: ApiClient;
  const models = async (body: Record<string, unknown>) => {
    const answer = await api.call('evals.models.list', body);
    expect(answer.status).toBe(200);
    return answer.body;
  };

  beforeAll(async () => {
    const configPath = path.join(tempDir(), 'assay.yaml');
    fs.writeFileSync(configPath, CONFIG);
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: configPath });
    api = server.client;
  });

  afterAll(() => server.close());

  it("lists each provider's models after the harness's own, the default user model and the judges' model once each", async () => {
    const list = await models({ q: '' });
    expect(list.harness).toBe('harness_kind_1');
    expect(list.total).toBe(3 + 4);
    expect(list.models.slice(0, 3).map((model: any) => model.vendor)).toEqual(['Anthropic', 'Anthropic', 'Anthropic']);
    expect(list.models.slice(3)).toEqual([
      // users.defaultModel (gpt-5.4-mini, the default) is already in the openai provider's list.
      { id: 'gpt-5.4', displayName: 'gpt-5.4', vendor: 'openai', summary: through('openai', 'openai') },
      { id: 'gpt-5.4-mini', displayName: 'gpt-5.4-mini', vendor: 'openai', summary: through('openai', 'openai') },
      { id: 'qwen3-coder', displayName: 'qwen3-coder', vendor: 'local', summary: through('local', 'openai-compatible') },
      { id: 'claude-haiku-4-5', displayName: 'claude-haiku-4-5', vendor: 'claude', summary: through('claude', 'anthropic') },
    ]);
  });

  it('filters them with q and counts them in total, for every harness', async () => {
    expect(await models({ q: 'GPT-5.4', harness: 'command' })).toEqual({
      agent: null,
      harness: 'command',
      models: [
        { id: 'gpt-5.4', displayName: 'gpt-5.4', vendor: 'openai', summary: through('openai', 'openai') },
        { id: 'gpt-5.4-mini', displayName: 'gpt-5.4-mini', vendor: 'openai', summary: through('openai', 'openai') },
      ],
      total: 2,
    });
    const haiku = await models({ q: 'haiku' });
    expect(haiku.models.map((model: any) => [model.id, model.vendor])).toEqual([
      ['claude-haiku-4-5', 'Anthropic'],
      ['claude-haiku-4-5', 'claude'],
    ]);
    expect(haiku.total).toBe(2);
    expect(await models({ q: 'qwen', harness: 'harness_kind_4' })).toMatchObject({
      total: 2,
      models: [
        { id: 'qwen3-coder', vendor: 'Alibaba' },
        { id: 'qwen3-coder', vendor: 'local' },
      ],
    });
    expect(await models({ q: 'no such model' })).toEqual({ agent: null, harness: 'harness_kind_1', models: [], total: 0 });
  });
});
