import * as fs from 'node:fs';
import * as path from 'node:path';
import { startFakeProvider, FakeProvider } from '../support/fake-provider';
import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { filesUnder, INIT_KEY, InProcessServer, startInProcess, tempDir } from '../support/servers';

const SERVER_KEY = 'sk-fake-server-key-0123456789abcdef';
const CONNECTOR_KEY = 'sk-ant-connector-key-9876543210fedcba';
const KEY_VARIABLE = 'FAKE_PROVIDER_KEY_FOR_TESTS';

/**
 * Simulated users over a real provider protocol: the fake provider on loopback answers as the
 * user model, the trial runs for real in the default sandbox.
 */
describe('conversations: simulated users through model providers', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let provider: FakeProvider;
  const responses: string[] = [];

  beforeAll(async () => {
    provider = await startFakeProvider();
    process.env[KEY_VARIABLE] = SERVER_KEY;
    const configPath = path.join(tempDir(), 'assay.yaml');
    fs.writeFileSync(
      configPath,
      [
        'allowUnsandboxed: true',
        'providers:',
        `  fake: { protocol: openai, baseURL: "${provider.url}", apiKeyEnv: ${KEY_VARIABLE}, timeoutMs: 1500 }`,
        `  keyless: { protocol: openai, baseURL: "${provider.url}", apiKeyEnv: UNSET_PROVIDER_KEY_FOR_TESTS }`,
        `  claude: { protocol: anthropic, baseURL: "${provider.anthropicURL}" }`,
        'users:',
        '  default: fake',
        '  defaultModel: user-model-1',
        '  harness_kind_2: keyless',
        '  harness_kind_3: claude',
        'prices:',
        '  user-model-1: { inputPerMTok: 2, outputPerMTok: 8 }',
      ].join('\n'),
    );
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: configPath });
    api = server.client;
  });

  afterAll(async () => {
    await server.close();
    await provider.close();
    delete process.env.FAKE_PROVIDER_KEY_FOR_TESTS;
  });

  beforeEach(() => provider.requests.splice(0));

  /** Appends each turn's message to turns.log and answers with the turn number. */
  const agent = {
    harness: 'command',
    model: 'none',
    profile: { run: 'msg=$(cat); echo "turn $ASSAY_TURN: $msg" >> turns.log; echo "finished turn $ASSAY_TURN"' },
  };
  const simulated = (extra: Record<string, unknown> = {}) => ({ kind: 'simulated', goal: 'Get a greeting file', prompt: 'You are terse.', ...extra });

  async function runCase(evalCase: Record<string, unknown>) {
    const started = await api.call('evals.batches.start', startBody({ cases: [evalCase], variants: [agent] }));
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    responses.push(JSON.stringify(batch));
    expect(batch.status).toBe('finished');
    return { run: batch.runs[0], trial: batch.runs[0].trials[0] };
  }

  it('answers through the provider until it says <<DONE>>: user-done, its usage a cost of its own, userModel shown', async () => {
    provider.answer({ text: 'Now add a README too.', usage: { input: 100, output: 20 } }, { text: '<<DONE>>', usage: { input: 150, output: 5 } });
    const { run, trial } = await runCase({
      id: 'simulated-done',
      variables: { word: 'hello' },
      user: simulated(),
      verify: 'grep -q "turn 2: Now add a README too." turns.log',
    });
    expect(trial).toMatchObject({ status: 'passed', turns: 2, endReason: 'user-done' });
    expect(trial.trajectory.filter((entry: any) => entry._tag === 'message').map((m: any) => `${m.role}${m.turn}:${m.text}`)).toEqual([
      'user1:Write hello into out.txt',
      'agent1:finished turn 1',
      'user2:Now add a README too.',
      'agent2:finished turn 2',
    ]);
    expect(run.variant.userModel).toBe('user-model-1');
    // The agent's usage stays the agent's; the user's is its own component, priced from the table.
    expect(trial.usage).toBeNull();
    const user = trial.costs.components.find((component: any) => component.classification === 'simulated-user');
    expect(user).toMatchObject({
      component: 'user',
      source: 'fake',
      usd: (250 * 2 + 25 * 8) / 1_000_000,
      detail: { model: 'user-model-1', provider: 'fake', calls: 2, inputTokens: 250, outputTokens: 25, totalTokens: 275 },
    });
    expect(trial.costs.incomplete).toBe(false);
    // The user model read the goal and persona, then the agent's turns as the messages it answers.
    expect(provider.requests).toHaveLength(2);
    const [first, second] = provider.requests;
    expect(first.body.model).toBe('user-model-1');
    expect(first.headers.authorization).toBe(`Bearer ${SERVER_KEY}`);
    const system = first.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('Get a greeting file');
    expect(system.content).toContain('You are terse.');
    expect(system.content).toContain('<<DONE>>');
    expect(system.content).toContain('Write hello into out.txt');
    expect(first.body.messages.slice(1)).toEqual([{ role: 'user', content: 'finished turn 1' }]);
    expect(second.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'finished turn 1' },
      { role: 'assistant', content: 'Now add a README too.' },
      { role: 'user', content: 'finished turn 2' },
    ]);
  });

  it('voids the trial when the provider answers 500, and the batch finishes', async () => {
    provider.setDefault({ status: 500, error: 'the fake is down' });
    try {
      const { run, trial } = await runCase({ id: 'provider-500', variables: { word: 'x' }, user: simulated(), verify: 'true' });
      expect(trial.status).toBe('void');
      expect(trial.failure).toMatch(/simulated user.*provider "fake".*500/);
      expect(trial.voidFields).toEqual(['user']);
      expect(trial).toMatchObject({ turns: 1, endReason: 'failed' });
      expect(run.status).toBe('finished');
    } finally {
      provider.setDefault({ text: 'ok', usage: { input: 10, output: 2 } });
    }
  });

  it('voids the trial when the provider does not answer within its timeout', async () => {
    provider.setDefault({ hang: true });
    try {
      const { trial } = await runCase({ id: 'provider-hangs', variables: { word: 'x' }, user: simulated(), verify: 'true' });
      expect(trial.status).toBe('void');
      expect(trial.failure).toMatch(/provider "fake" did not answer within 1500 ms/);
      expect(trial.endReason).toBe('failed');
    } finally {
      provider.setDefault({ text: 'ok', usage: { input: 10, output: 2 } });
    }
  });

  it('voids the trial before it runs when the provider has no key, saying which variable or connector to set', async () => {
    const { trial } = await runCase({
      id: 'no-key',
      variables: { word: 'x' },
      user: simulated({ harness: 'harness_kind_2', model: 'user-model-2' }),
      verify: 'true',
    });
    expect(trial.status).toBe('void');
    expect(trial.failure).toContain('UNSET_PROVIDER_KEY_FOR_TESTS');
    expect(trial.failure).toContain('"openai" connector');
    expect(trial.trajectory).toEqual([]);
    expect(provider.requests).toHaveLength(0);
  });

  it("takes the key of the organization's connector when the provider names no variable (anthropic protocol)", async () => {
    const added = await api.call('connectors.add', { integrationId: 'anthropic', authMethodId: 'api-key', name: 'claude', values: { apiKey: CONNECTOR_KEY } });
    expect(added.status).toBe(200);
    provider.answer({ text: '<<DONE>>', usage: { input: 40, output: 3 } });
    const { run, trial } = await runCase({
      id: 'connector-key',
      variables: { word: 'hello' },
      user: simulated({ harness: 'harness_kind_3', model: 'claude-user' }),
      verify: 'true',
    });
    expect(trial).toMatchObject({ failure: null, status: 'passed', turns: 1, endReason: 'user-done' });
    expect(run.variant.userModel).toBe('claude-user');
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0].protocol).toBe('anthropic');
    expect(provider.requests[0].headers['x-api-key']).toBe(CONNECTOR_KEY);
    // No price for this model: the cost record says it is incomplete rather than guess.
    const user = trial.costs.components.find((component: any) => component.classification === 'simulated-user');
    expect(user).toMatchObject({ usd: null, detail: { model: 'claude-user', calls: 1, inputTokens: 40, outputTokens: 3 } });
    expect(trial.costs.incomplete).toBe(true);
  });

  it('never writes a provider key to the event log, read models, logs or responses', async () => {
    const listed = await api.call('connectors.list', {});
    const batches = await api.call('evals.batches.list', {});
    responses.push(listed.text, batches.text);
    const haystacks = [...responses, ...server.logs.lines];
    for (const key of [SERVER_KEY, CONNECTOR_KEY]) {
      expect(haystacks.filter((text) => text.includes(key))).toEqual([]);
      const files = filesUnder(server.dataDir).filter((file) => fs.readFileSync(file).includes(key));
      expect(files).toEqual([]);
    }
  });
});
