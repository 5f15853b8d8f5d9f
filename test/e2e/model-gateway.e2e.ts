import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { describeWithBubblewrap } from '../support/bubblewrap';
import { startBody, waitForBatch } from '../support/evals';
import { FakeProvider, startFakeProvider } from '../support/fake-provider';
import { ChildServer, filesUnder, INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';
import { probeNeedle, SANDBOX_PROBE } from '../support/sandbox-probe';

const REAL_KEY = 'sk-real-provider-key-0f9e8d7c6b5a';

/** An agent: one chat completion through the gateway, the answer written to out.txt; it prints the gateway it was given. */
const AGENT = String.raw`
import json, os, sys, urllib.request, urllib.error
base = os.environ.get('AGENT_BASE_URL') or os.environ['ASSAY_MODEL_BASE_URL']
token = os.environ.get('AGENT_KEY') or os.environ['ASSAY_MODEL_API_KEY']
print('GATEWAY', base, token)
if os.environ.get('AGENT_REPORT'):
    print(json.dumps({'usage': {'input_tokens': int(os.environ['AGENT_REPORT']), 'output_tokens': 1}}))
needle = 'sk-real-' + 'provider-key'  # split, so that this file does not hold it
print('KEY-IN-ENV' if any(needle in value for value in os.environ.values()) else 'NO-KEY-IN-ENV')
stream = os.environ.get('AGENT_STREAM') == '1'
for _ in range(int(os.environ.get('AGENT_CALLS', '1'))):
    body = {'model': os.environ['ASSAY_MODEL'], 'messages': [{'role': 'user', 'content': os.environ.get('AGENT_SAY', 'say hello')}], 'stream': stream}
    request = urllib.request.Request(base + '/v1/chat/completions', data=json.dumps(body).encode(), headers={'authorization': 'Bearer ' + token, 'content-type': 'application/json'})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read().decode()
    except urllib.error.HTTPError as error:
        print('HTTP', error.code, error.read().decode())
        sys.exit(1)
    if stream:
        chunks = [json.loads(line[5:]) for line in text.splitlines() if line.startswith('data:') and line[5:].strip() != '[DONE]']
        content = ''.join(chunk['choices'][0]['delta'].get('content') or '' for chunk in chunks if chunk['choices'])
    else:
        content = json.loads(text)['choices'][0]['message']['content']
    open('out.txt', 'w').write(content)
`;

/** An agent speaking one of the other protocols (AGENT_PROTOCOL: anthropic, responses, gemini), streamed or not; it writes the raw answer to out.txt. */
const AGENT_ANY = String.raw`
import json, os, sys, urllib.request, urllib.error
base, token, model = os.environ['ASSAY_MODEL_BASE_URL'], os.environ['ASSAY_MODEL_API_KEY'], os.environ['ASSAY_MODEL']
protocol, stream = os.environ['AGENT_PROTOCOL'], os.environ.get('AGENT_STREAM') == '1'
if protocol == 'anthropic':
    url, headers = base + '/v1/messages', {'x-api-key': token, 'anthropic-version': '2023-06-01'}
    body = {'model': model, 'max_tokens': 64, 'messages': [{'role': 'user', 'content': 'say hello'}], 'stream': stream}
elif protocol == 'responses':
    url, headers, body = base + '/v1/responses', {'authorization': 'Bearer ' + token}, {'model': model, 'input': 'say hello', 'stream': stream}
elif protocol == 'chat':
    url, headers = base + '/v1/chat/completions', {'authorization': 'Bearer ' + token}
    body = {'model': model, 'messages': [{'role': 'user', 'content': 'say hello'}], 'stream': stream}
else:
    method = 'streamGenerateContent?alt=sse' if stream else 'generateContent'
    url, headers = base + '/v1beta/models/' + model + ':' + method, {'x-goog-api-key': token}
    body = {'contents': [{'role': 'user', 'parts': [{'text': 'say hello'}]}]}
headers['content-type'] = 'application/json'
request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
try:
    with urllib.request.urlopen(request, timeout=30) as answer:
        first = answer.readline().decode()
        if os.environ.get('AGENT_MARK_FIRST') == '1':
            open('first-chunk-seen', 'w').write(first)
        text = first + answer.read().decode()
except urllib.error.HTTPError as error:
    print('HTTP', error.code, error.read().decode())
    sys.exit(1)
open('out.txt', 'w').write(text)
`;

function config(fake: FakeProvider, extra: string[] = []): string {
  const file = path.join(tempDir(), 'assay.yaml');
  fs.writeFileSync(
    file,
    [
      'allowUnsandboxed: true',
      'sandboxes:',
      '  sandbox_kind_1: { driver: process }',
      '  sandbox_kind_2: { driver: bubblewrap }',
      'providers:',
      `  fake: { protocol: openai-compatible, baseURL: "${fake.url}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
      `  other: { protocol: anthropic, baseURL: "${fake.anthropicURL}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
      `  claude: { protocol: anthropic, baseURL: "${fake.anthropicURL}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
      `  resp: { protocol: openai-responses, baseURL: "${fake.url}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
      `  gem: { protocol: gemini, baseURL: "${fake.geminiURL}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
      `  byconnector: { protocol: anthropic, baseURL: "${fake.anthropicURL}" }`,
      'harnesses:',
      '  harness_kind_3:',
      '    version: "1.0"',
      '    provider: fake',
      '    run: "python3 agent.py"',
      '    env: { AGENT_BASE_URL: "{{gateway.url}}", AGENT_KEY: "{{gateway.token}}" }',
      '    usage: { format: json-lines, aggregate: sum, inputTokens: usage.input_tokens, outputTokens: usage.output_tokens }',
      'prices:',
      '  fake-model: { inputPerMTok: 1, outputPerMTok: 2 }',
      ...extra,
      '',
    ].join('\n'),
  );
  return file;
}

function agentBody(extraEnv: Record<string, string> = {}, sandbox = 'sandbox_kind_1'): Record<string, any> {
  return startBody({
    cases: [{ id: 'say-hello', variables: { word: 'hello' }, verify: 'grep -q "hello from the model" out.txt' }],
    variants: [
      {
        harness: 'command',
        model: 'fake-model',
        sandbox,
        profile: {
          provider: 'fake',
          files: { 'agent.py': AGENT, 'probe.py': SANDBOX_PROBE },
          env: extraEnv,
          run: 'python3 agent.py && { [ -z "$PROBE_PORTS" ] || python3 probe.py; }',
        },
      },
    ],
  });
}

/** The host's addresses other than loopback: a sandbox without a network must reach none. */
function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .flatMap((entry) => (entry && !entry.internal && !entry.address.startsWith('fe80') ? [entry.address] : []));
}

/** What the trial printed of its gateway: the URL and the token it was given. */
function gatewayOf(trial: any): { url: string; token: string } {
  const output = trial.trajectory
    .filter((entry: any) => entry._tag === 'command')
    .map((entry: any) => entry.output as string)
    .join('\n');
  const match = /GATEWAY (\S+) (\S+)/.exec(output);
  if (!match) throw new Error(`the agent printed no gateway:\n${output}`);
  return { url: match[1], token: match[2] };
}

/**
 * The model gateway, over real HTTP with a local fake provider: the agent is given a gateway URL
 * and a token of its own, never the provider's key; the gateway swaps the token for the key,
 * forwards the call, and meters it into the trial's trajectory, usage and costs.
 */
describe('the model gateway', () => {
  let fake: FakeProvider;
  let server: ChildServer;
  let dataDir: string;
  let serverTmp: string;

  beforeAll(async () => {
    fake = await startFakeProvider();
    dataDir = tempDir();
    serverTmp = tempDir('assay-tmp-');
    server = await startChild({
      ASSAY_DATA_DIR: dataDir,
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_CONFIG: config(fake),
      FAKE_PROVIDER_KEY: REAL_KEY,
      ASSAY_METRICS: '1',
      TMPDIR: serverTmp,
    });
  });

  afterAll(async () => {
    await server.stop();
    await fake.close();
  });

  it.each([
    ['a whole answer', {}, false],
    ['a streamed answer', { AGENT_STREAM: '1' }, true],
  ])('%s: the agent passes through the gateway, and its usage, trajectory and cost are what the provider reported', async (_name, env, stream) => {
    fake.answer({ text: 'hello from the model', usage: { input: 1200, output: 300 } });
    const before = fake.requests.length;
    const started = await server.client.call('evals.batches.start', agentBody(env));
    expect(started.status).toBe(200);
    const batch = await waitForBatch(server.client, started.body.id);
    const trial = batch.runs[0].trials[0];
    expect([trial.status, trial.failure]).toEqual(['passed', null]);

    const calls = trial.trajectory.filter((entry: any) => entry._tag === 'model-call');
    expect(calls).toEqual([
      expect.objectContaining({
        provider: 'fake',
        model: 'fake-model',
        protocol: 'openai-chat',
        turn: 1,
        stream,
        status: 200,
        inputTokens: 1200,
        outputTokens: 300,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      }),
    ]);
    expect(calls[0].finishedAtMillis).toBeGreaterThanOrEqual(calls[0].startedAtMillis);
    if (stream) expect(calls[0].firstTokenMs).toEqual(expect.any(Number));
    else expect(calls[0].firstTokenMs).toBeNull();
    expect(trial.usage).toMatchObject({ inputTokens: 1200, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 1500 });
    const model = trial.costs.components.find((component: any) => component.component === 'model');
    // 1,200 input tokens at $1 and 300 output tokens at $2 a million.
    expect(model).toMatchObject({ classification: 'model', source: 'gateway', usd: 0.0018, detail: expect.objectContaining({ provider: 'fake', calls: 1 }) });

    // The provider got the real key; the agent had only its token.
    const forwarded = fake.requests.slice(before);
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0].headers.authorization).toBe(`Bearer ${REAL_KEY}`);
    if (stream) expect(forwarded[0].body.stream_options).toEqual({ include_usage: true });
    const output = trial.trajectory.find((entry: any) => entry._tag === 'command').output;
    expect(output).toContain('NO-KEY-IN-ENV');
    const { url, token } = gatewayOf(trial);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(token).not.toContain(REAL_KEY);
    expect(Buffer.from(token.replace(/^assay-gw-/, ''), 'base64url').length).toBeGreaterThanOrEqual(16);
  });

  it('refuses a token after its trial, a made-up token and no token with 401 in the protocol shape', async () => {
    const started = await server.client.call('evals.batches.start', agentBody());
    const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
    const { url, token } = gatewayOf(trial);
    const call = (headers: Record<string, string>, route = '/v1/chat/completions') =>
      fetch(url + route, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'fake-model', messages: [] }),
      });

    const tries: Array<Record<string, string>> = [{ authorization: `Bearer ${token}` }, { authorization: 'Bearer assay-gw-made-up' }, {}];
    for (const headers of tries) {
      const answer = await call(headers);
      expect(answer.status).toBe(401);
      expect(await answer.json()).toEqual({ error: expect.objectContaining({ type: 'invalid_api_key', message: expect.any(String) }) });
    }
    const anthropic = await call({ 'x-api-key': 'assay-gw-made-up', 'anthropic-version': '2023-06-01' }, '/v1/messages');
    expect(anthropic.status).toBe(401);
    expect(await anthropic.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) } });
  });

  it('a provider that fails during a trial the agent then fails voids the trial, naming the provider', async () => {
    // The agent makes one call, and fails when it is refused.
    fake.answer({ status: 500, error: 'the model is down' });
    const started = await server.client.call('evals.batches.start', agentBody());
    const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
    expect(trial.status).toBe('void');
    expect(trial.failure).toBe('the model provider failed: the provider "fake" answered HTTP 500');
    expect(trial.trajectory.filter((entry: any) => entry._tag === 'model-call').map((entry: any) => entry.status)).toEqual([500]);
  });

  it('refuses a profile naming a provider the server does not have, with 400 naming it', async () => {
    const body = agentBody();
    body.variants[0].profile.provider = 'nowhere';
    const answer = await server.client.call('evals.batches.start', body);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('variants[0].profile.provider names the model provider "nowhere"');
    const bad = agentBody();
    bad.variants[0].profile.provider = 'not a name!';
    expect((await server.client.call('evals.batches.start', bad)).status).toBe(400);
  });

  /** A trial of AGENT_ANY through `provider`. */
  function anyBody(provider: string, env: Record<string, string>): Record<string, any> {
    const body = agentBody(env);
    body.variants[0].profile = { provider, files: { 'agent.py': AGENT_ANY }, env, run: 'python3 agent.py' };
    return body;
  }

  it.each([
    ['anthropic', 'claude', 'anthropic', false, 'x-api-key', REAL_KEY],
    ['anthropic', 'claude', 'anthropic', true, 'x-api-key', REAL_KEY],
    ['responses', 'resp', 'openai-responses', false, 'authorization', `Bearer ${REAL_KEY}`],
    ['responses', 'resp', 'openai-responses', true, 'authorization', `Bearer ${REAL_KEY}`],
    ['gemini', 'gem', 'gemini', false, 'x-goog-api-key', REAL_KEY],
    ['gemini', 'gem', 'gemini', true, 'x-goog-api-key', REAL_KEY],
  ])(
    '%s through the provider %s (%s), streamed %s: metered from its own usage fields, the key in its own header',
    async (protocol, provider, wire, stream, header, value) => {
      fake.answer({ text: 'hello from the model', usage: { input: 321, output: 45 } });
      const before = fake.requests.length;
      const started = await server.client.call('evals.batches.start', anyBody(provider, { AGENT_PROTOCOL: protocol, AGENT_STREAM: stream ? '1' : '0' }));
      expect(started.status).toBe(200);
      const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
      expect([trial.status, trial.failure]).toEqual(['passed', null]);
      expect(trial.trajectory.filter((entry: any) => entry._tag === 'model-call')).toEqual([
        expect.objectContaining({ provider, protocol: wire, stream, status: 200, inputTokens: 321, outputTokens: 45 }),
      ]);
      expect(trial.usage).toMatchObject({ inputTokens: 321, outputTokens: 45 });
      const forwarded = fake.requests.slice(before);
      expect(forwarded).toHaveLength(1);
      expect(forwarded[0].headers[header]).toBe(value);
      expect(JSON.stringify(forwarded[0].headers)).not.toContain('assay-gw-');
    },
  );

  it("passes a stream's first event on before the provider has finished its answer", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.answer({ text: 'hello from the model', usage: { input: 5, output: 5 }, holdAfterFirst: () => released });
    try {
      const started = await server.client.call('evals.batches.start', anyBody('fake', { AGENT_PROTOCOL: 'chat', AGENT_STREAM: '1', AGENT_MARK_FIRST: '1' }));
      expect(started.status).toBe(200);
      // The agent saw the first event while the provider still holds the rest back.
      await waitUntil(async () => filesUnder(serverTmp).some((file) => file.endsWith(`${path.sep}first-chunk-seen`)), 20000);
      release();
      const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
      expect([trial.status, trial.failure]).toEqual(['passed', null]);
      expect(trial.trajectory.find((entry: any) => entry._tag === 'model-call')).toMatchObject({ stream: true, inputTokens: 5, outputTokens: 5 });
    } finally {
      release();
    }
  });

  it("an agent harness names its provider: its environment takes the gateway's URL and token, and what the agent reports is kept beside the metered usage", async () => {
    fake.answer({ text: 'hello from the model', usage: { input: 70, output: 30 } });
    const body = agentBody({ AGENT_REPORT: '999' });
    body.variants[0] = {
      harness: 'harness_kind_3',
      model: 'fake-model',
      sandbox: 'sandbox_kind_1',
      profile: { files: { 'agent.py': AGENT }, env: { AGENT_REPORT: '999' } },
    };
    const started = await server.client.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
    expect([trial.status, trial.failure]).toEqual(['passed', null]);
    expect(gatewayOf(trial).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(gatewayOf(trial).token).toMatch(/^assay-gw-/);
    // Counted: what the gateway measured, not the 999 the agent printed.
    expect(trial.usage).toMatchObject({ inputTokens: 70, outputTokens: 30 });
    const model = trial.costs.components.find((component: any) => component.component === 'model');
    expect(model).toMatchObject({
      source: 'gateway',
      detail: expect.objectContaining({ inputTokens: 70, reported: expect.objectContaining({ inputTokens: 999, outputTokens: 1 }) }),
    });
    await waitUntil(async () => server.output().includes('the agent reported other token usage than the gateway measured'), 5000);
  });

  it("a key the provider refuses voids the trial, naming the provider, and marks the organization's connector invalid", async () => {
    const connectorKey = 'sk-connector-key-5a4b3c2d1e';
    const added = await server.client.call('connectors.add', {
      integrationId: 'anthropic',
      authMethodId: 'api-key',
      name: 'refused',
      values: { apiKey: connectorKey },
    });
    expect(added.status).toBe(200);
    fake.answer({ status: 401, error: 'invalid x-api-key' });
    const before = fake.requests.length;
    const started = await server.client.call('evals.batches.start', anyBody('byconnector', { AGENT_PROTOCOL: 'anthropic', AGENT_STREAM: '0' }));
    expect(started.status).toBe(200);
    const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
    expect([trial.status, trial.failure]).toEqual(['void', 'the model provider failed: the provider "byconnector" refused its key (HTTP 401)']);
    expect(fake.requests.slice(before).map((request) => request.headers['x-api-key'])).toEqual([connectorKey]);
    const listed = (await server.client.call('connectors.list')).body.find((connector: { id: string }) => connector.id === added.body.id);
    expect(listed.status).toBe('invalid');
  });

  describe('budgets (profile.budget): a call past one is refused with 429 and the trial fails', () => {
    /** Runs one trial making `calls` calls of 100 tokens each (1,200 and 300 for the dollar budget) under `budget`. */
    async function underBudget(budget: Record<string, number>, calls: number, usage = { input: 60, output: 40 }): Promise<any> {
      fake.setDefault({ text: 'hello from the model', usage });
      const body = agentBody({ AGENT_CALLS: String(calls) });
      body.variants[0].profile.budget = budget;
      const started = await server.client.call('evals.batches.start', body);
      expect(started.status).toBe(200);
      return (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
    }

    afterAll(() => fake.setDefault({ text: 'ok', usage: { input: 10, output: 2 } }));

    it.each([
      [{ maxModelCalls: 2 }, 2, null],
      [{ maxModelCalls: 1 }, 2, 'the agent exceeded its budget: maxModelCalls (2 of 1)'],
      [{ maxTokens: 200 }, 2, null],
      [{ maxTokens: 199 }, 2, 'the agent exceeded its budget: maxTokens (200 of 199)'],
      [{ maxTokens: 100 }, 2, 'the agent exceeded its budget: maxTokens (100 of 100)'],
    ])('budget %j with %i calls: %s', async (budget, calls, failure) => {
      const trial = await underBudget(budget, calls);
      expect([trial.status, trial.failure]).toEqual(failure === null ? ['passed', null] : ['failed', failure]);
      const refused = failure !== null && trial.trajectory.filter((entry: any) => entry._tag === 'model-call').length < calls;
      if (refused) expect(trial.trajectory.find((entry: any) => entry._tag === 'command').output).toContain('HTTP 429');
    });

    it('a dollar budget: exactly the price passes, just below fails', async () => {
      // 1,200 input tokens at $1 and 300 output tokens at $2 a million: $0.0018.
      expect((await underBudget({ maxUsd: 0.0018 }, 1, { input: 1200, output: 300 })).status).toBe('passed');
      const over = await underBudget({ maxUsd: 0.0017 }, 1, { input: 1200, output: 300 });
      expect([over.status, over.failure]).toEqual(['failed', 'the agent exceeded its budget: maxUsd (0.0018 of 0.0017)']);
    });

    it.each([
      [{ maxModelCalls: 0 }, 400],
      [{ maxModelCalls: 100001 }, 400],
      [{ maxModelCalls: 1.5 }, 400],
      [{ maxTokens: 0 }, 400],
      [{ maxTokens: 1000000001 }, 400],
      [{ maxUsd: 0 }, 400],
      [{ maxUsd: 100001 }, 400],
      [{ maxUsd: 'a dollar' }, 400],
      [{ maxModelCalls: 100000, maxTokens: 1000000000, maxUsd: 100000 }, 200],
      [{ maxModelCalls: 1, maxTokens: 1, maxUsd: 0.000001 }, 200],
    ])('budget %j at the start: %i', async (budget, status) => {
      const body = agentBody();
      body.variants[0].profile.budget = budget;
      const answer = await server.client.call('evals.batches.start', body);
      expect(answer.status).toBe(status);
      if (status === 200) await waitForBatch(server.client, answer.body.id);
      else expect(answer.body.message).toContain('budget');
    });
  });

  describe('evals.trials.modelCalls', () => {
    it("lists a trial's calls; without gateway.recordBodies their bodies are null", async () => {
      fake.answer({ text: 'hello from the model', usage: { input: 3, output: 4 } });
      const started = await server.client.call('evals.batches.start', agentBody());
      const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
      const answer = await server.client.call('evals.trials.modelCalls', { trialId: trial.id });
      expect(answer.status).toBe(200);
      expect(answer.body.calls).toEqual([
        expect.objectContaining({ _tag: 'model-call', inputTokens: 3, outputTokens: 4, request: null, response: null, truncated: false }),
      ]);
    });

    it.each([
      [{}, 400],
      [{ trialId: '' }, 400],
      [{ trialId: 'x'.repeat(201) }, 400],
      [{ trialId: 'trl_nope', extra: 1 }, 400],
      [{ trialId: 'trl_nope' }, 404],
      [{ trialId: 'x'.repeat(200) }, 404],
    ])('%j: %i', async (body, status) => {
      expect((await server.client.call('evals.trials.modelCalls', body)).status).toBe(status);
    });
  });

  describe('with gateway.recordBodies', () => {
    let recording: ChildServer;
    const SECRET = 'secret-phrase-9f8e7d6c5b';

    beforeAll(async () => {
      recording = await startChild({
        ASSAY_DATA_DIR: tempDir(),
        ASSAY_INIT_ORG: 'acme',
        ASSAY_INIT_API_KEY: INIT_KEY,
        ASSAY_CONFIG: config(fake, ['gateway: { recordBodies: true }']),
        FAKE_PROVIDER_KEY: REAL_KEY,
      });
      expect((await recording.client.call('environment.set', { variables: [{ name: 'AGENT_SAY', value: SECRET, secret: true }] })).status).toBe(200);
    });

    afterAll(async () => {
      await recording.stop();
    });

    it.each([
      ['a whole answer', {}],
      ['a streamed answer', { AGENT_STREAM: '1' }],
    ])("%s: each call's request and answer are kept, redacted like output", async (_name, env) => {
      fake.answer({ text: 'hello from the model', usage: { input: 8, output: 9 } });
      const started = await recording.client.call('evals.batches.start', agentBody(env));
      const trial = (await waitForBatch(recording.client, started.body.id)).runs[0].trials[0];
      expect(trial.status).toBe('passed');
      const { calls } = (await recording.client.call('evals.trials.modelCalls', { trialId: trial.id })).body;
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ inputTokens: 8, outputTokens: 9, truncated: false });
      expect(JSON.parse(calls[0].request)).toMatchObject({ model: 'fake-model', messages: [{ role: 'user', content: '[redacted]' }] });
      expect(calls[0].response).toContain('hello from the model');
      expect(JSON.stringify(calls)).not.toContain(SECRET);
      // The trial's own record holds the entry alone: the bodies are read from its events.
      expect(JSON.stringify(trial)).not.toContain('"response"');
    });

    it('a strict replay of a recorded batch answers from the recording, with no upstream call; an unmatched call voids the trial, naming it', async () => {
      const say = { AGENT_SAY: 'replay me, please' };
      fake.answer({ text: 'hello from the model', usage: { input: 21, output: 13 } });
      const recorded = await recording.client.call('evals.batches.start', agentBody(say));
      const recordedTrial = (await waitForBatch(recording.client, recorded.body.id)).runs[0].trials[0];
      expect(recordedTrial.status).toBe('passed');

      const replayed = (env: Record<string, string>, mode: string) => {
        const body = agentBody(env);
        body.variants[0].profile.replay = { batchId: recorded.body.id, mode };
        return recording.client.call('evals.batches.start', body);
      };
      // The provider is gone while the replay runs: every answer comes from the recording.
      const port = Number(new URL(fake.url).port);
      await fake.close();
      const strict = await replayed(say, 'strict');
      expect(strict.status).toBe(200);
      const run = (await waitForBatch(recording.client, strict.body.id)).runs[0];
      fake = await startFakeProvider(port);
      const before = fake.requests.length;
      expect([run.trials[0].status, run.trials[0].failure]).toEqual(['passed', null]);
      expect(recordedTrial.status).toBe(run.trials[0].status);
      expect(run.trials[0].trajectory.filter((entry: any) => entry._tag === 'model-call')).toEqual([
        expect.objectContaining({ inputTokens: 21, outputTokens: 13, status: 200 }),
      ]);
      expect(run.setup.replayOf).toEqual({ batchId: recorded.body.id, mode: 'strict' });

      const unmatched = await replayed({ AGENT_SAY: 'something never recorded' }, 'strict');
      const voided = (await waitForBatch(recording.client, unmatched.body.id)).runs[0].trials[0];
      expect([voided.status, voided.failure]).toEqual(['void', 'the replay has no recorded answer for a call to fake-model (openai-chat)']);
      expect(fake.requests.length).toBe(before);

      fake.answer({ text: 'hello from the model', usage: { input: 5, output: 5 } });
      const fallback = await replayed({ AGENT_SAY: 'something never recorded' }, 'fallback');
      const upstream = (await waitForBatch(recording.client, fallback.body.id)).runs[0].trials[0];
      expect(upstream.status).toBe('passed');
      expect(fake.requests.length).toBe(before + 1);
    });

    it.each([
      [{ batchId: '', mode: 'strict' }, 400],
      [{ batchId: 'x'.repeat(201), mode: 'strict' }, 400],
      [{ batchId: 'bat_x', mode: 'loose' }, 400],
      [{ batchId: 'bat_x' }, 400],
      [{ batchId: 'bat_01a24b0e83e00002e98f0fe7e28e', mode: 'strict' }, 400],
    ])('replay %j at the start: %i', async (replay, status) => {
      const body = agentBody();
      body.variants[0].profile.replay = replay;
      const answer = await recording.client.call('evals.batches.start', body);
      expect(answer.status).toBe(status);
      expect(answer.body.message).toContain('replay');
    });

    it("a local variant's replay is refused at the start: its calls would go to the provider", async () => {
      const recorded = await recording.client.call('evals.batches.start', agentBody());
      await waitForBatch(recording.client, recorded.body.id);
      const body = agentBody({}, 'local');
      body.variants[0].profile.replay = { batchId: recorded.body.id, mode: 'strict' };
      // Local variants start through the local runner's operation (the CLI's --local).
      const answer = await recording.client.call('runner.batches.start', body);
      expect(answer.status).toBe(400);
      expect(answer.body.message).toContain('variants[0].profile.replay is for variants that run on the server');
      // The same replay of a server variant starts.
      const served = agentBody();
      served.variants[0].profile.replay = { batchId: recorded.body.id, mode: 'fallback' };
      const started = await recording.client.call('evals.batches.start', served);
      expect(started.status).toBe(200);
      await waitForBatch(recording.client, started.body.id);
    });
  });

  describeWithBubblewrap('under bubblewrap without a network', () => {
    it('the agent reaches its model at the same loopback URL, and nothing else; the real key is nowhere inside', async () => {
      fake.answer({ text: 'hello from the model', usage: { input: 40, output: 4 } });
      const ports = [new URL(server.url).port, new URL(fake.url).port, '1', '9'].join(',');
      const body = agentBody({ PROBE_PORTS: ports, PROBE_HOSTS: hostAddresses().join(','), ...probeNeedle(REAL_KEY) }, 'sandbox_kind_2');
      const started = await server.client.call('evals.batches.start', body);
      expect(started.status).toBe(200);
      const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
      const output = trial.trajectory
        .filter((entry: any) => entry._tag === 'command')
        .map((entry: any) => entry.output as string)
        .join('\n');
      expect([trial.status, trial.failure, trial.sandboxDriver ?? 'bubblewrap']).toEqual(['passed', null, 'bubblewrap']);
      expect(trial.trajectory.filter((entry: any) => entry._tag === 'model-call')).toEqual([
        expect.objectContaining({ status: 200, inputTokens: 40, outputTokens: 4 }),
      ]);
      const probes = JSON.parse(/PROBES (.*)/.exec(output)![1]);
      expect(Object.keys(probes).length).toBeGreaterThanOrEqual(4);
      expect(Object.entries(probes).filter(([, reached]) => reached)).toEqual([]);
      expect(JSON.parse(/KEY-FOUND (.*)/.exec(output)![1])).toEqual([]);
      expect(output).toContain('NO-KEY-IN-ENV');
      expect(gatewayOf(trial).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    });
  });

  it("/metrics counts the agents' calls by provider, model and outcome, with their tokens and time", async () => {
    const text = (await server.client.request('/metrics', undefined, { method: 'GET', key: null })).text;
    const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
    expect(value('assay_provider_calls_total{provider="fake",model="fake-model",outcome="ok"}')).toBeGreaterThanOrEqual(2);
    expect(value('assay_provider_calls_total{provider="fake",model="fake-model",outcome="server-error"}')).toBe(1);
    expect(value('assay_provider_tokens_total{provider="fake",model="fake-model",direction="input"}')).toBeGreaterThanOrEqual(2400);
    expect(value('assay_provider_call_duration_seconds_count{provider="fake",model="fake-model"}')).toBeGreaterThanOrEqual(3);
  });

  it('the real key is nowhere the service keeps or shows: the event log, the blobs, the server log', () => {
    const found = filesUnder(dataDir).filter((file) => fs.statSync(file).isFile() && fs.readFileSync(file).includes(REAL_KEY));
    expect(found).toEqual([]);
    expect(server.output()).not.toContain(REAL_KEY);
  });
});
