import { ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/** The model catalogue shipped with the service, per harness (the one cost estimates price from). */
describe('evals read side: models', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  describe('evals.models.list', () => {
    const models = async (body: Record<string, unknown>) => (await api.call('evals.models.list', body)).body;

    it('lists the first agent harness by default, by vendor then newest first', async () => {
      expect(await models({ q: '' })).toEqual({
        agent: null,
        harness: 'harness_kind_1',
        models: [
          { displayName: 'Claude Haiku 4.5', id: 'claude-haiku-4-5', summary: 'Fast, low-cost model.', vendor: 'Anthropic' },
          { displayName: 'Claude Sonnet 4.5', id: 'claude-sonnet-4-5', summary: 'Balanced model for coding agents.', vendor: 'Anthropic' },
          { displayName: 'Claude Opus 4.1', id: 'claude-opus-4-1', summary: 'Most capable model for long agentic coding tasks.', vendor: 'Anthropic' },
        ],
        total: 3,
      });
      const many = await models({ harness: 'harness_kind_4' });
      expect(many.models.map((model: any) => model.vendor)).toEqual(['Alibaba', 'Anthropic', 'Google', 'Moonshot AI', 'OpenAI']);
      expect(many.total).toBe(5);
      expect(await models({})).toMatchObject({ harness: 'harness_kind_1', total: 3 });
    });

    it('matches q case-insensitively in the id or the display name, per harness', async () => {
      expect(await models({ q: 'GPT', harness: 'harness_kind_2' })).toMatchObject({ harness: 'harness_kind_2', total: 3 });
      expect((await models({ q: 'codex', harness: 'harness_kind_2' })).models.map((model: any) => model.id)).toEqual(['gpt-5-codex']);
      expect((await models({ q: '5 MINI', harness: 'harness_kind_2' })).models.map((model: any) => model.id)).toEqual(['gpt-5-mini']);
      expect(await models({ q: 'gpt' })).toEqual({ agent: null, harness: 'harness_kind_1', models: [], total: 0 });
      expect(await models({ q: '', harness: 'command' })).toEqual({ agent: null, harness: 'command', models: [], total: 0 });
    });

    it('refuses an unknown harness or a q that is not a string', async () => {
      expect((await api.call('evals.models.list', { q: '', harness: 'harness_kind_9' })).body.issues[0].path).toEqual(['harness']);
      expect((await api.call('evals.models.list', { q: 5 })).status).toBe(400);
    });
  });
});
