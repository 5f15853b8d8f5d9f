import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_DRIVERS } from '#trial-runner';
import type { AgentName } from '#trial-runner';
import { AgentUnderTest, agentServerConfig, CI_AGENTS, installForTest, TEST_AGENTS_DIR, workspaceTask } from '../support/agents';
import { endsWithToolResult } from '../support/fake-agent-model';
import { describeWithBubblewrap } from '../support/bubblewrap';
import { probeNeedle, SANDBOX_PROBE } from '../support/sandbox-probe';
import { startBody, waitForBatch } from '../support/evals';
import { FakeProvider, startFakeProvider } from '../support/fake-provider';
import { ChildServer, INIT_KEY, startChild, tempDir } from '../support/servers';

const REAL_KEY = 'sk-real-agent-provider-key-4b3c2d1e';

/** The agents tested only when ASSAY_TEST_ALL_AGENTS=1 (installed on demand). */
const MORE_AGENTS: AgentUnderTest[] = [
  { agent: 'copilot', kind: 'harness_kind_1', provider: 'chat', protocol: 'openai-compatible', model: 'gpt-4.1' },
  { agent: 'cline', kind: 'harness_kind_2', provider: 'chat', protocol: 'openai-compatible', model: 'fake-model' },
  { agent: 'continue', kind: 'harness_kind_3', provider: 'chat', protocol: 'openai-compatible', model: 'fake-model' },
];

/** The variable holding the gateway's URL in each agent's environment (the probe checks it answers). */
const GATEWAY_VARIABLE: Partial<Record<AgentName, string>> = {
  'claude-code': 'ANTHROPIC_BASE_URL',
  'gemini-cli': 'GOOGLE_GEMINI_BASE_URL',
  'qwen-code': 'OPENAI_BASE_URL',
  copilot: 'COPILOT_PROVIDER_BASE_URL',
};

/** Each agent's shell tool and the argument that takes the command (the probe runs through it). */
const SHELL_TOOL: Partial<Record<AgentName, [string, string]>> = {
  'claude-code': ['Bash', 'command'],
  'gemini-cli': ['run_shell_command', 'command'],
  'qwen-code': ['run_shell_command', 'command'],
  // Not copilot: its shell tool's environment leaves out the COPILOT_ variables, where its gateway URL is.
};

/** Agents whose JSON output does not list their tool calls (their guide pages say so): no tool-call entries. */
const SILENT_ABOUT_TOOLS: AgentName[] = ['cline', 'continue'];

function config(fake: FakeProvider, agents: AgentUnderTest[]): string {
  const file = path.join(tempDir(), 'assay.yaml');
  const lines = [...agentServerConfig(fake, agents), ''];
  fs.writeFileSync(file, lines.join('\n'));
  return file;
}

function agentCase(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'write-hello', variables: { word: 'hello' }, verify: 'grep -qx hello out.txt', ...extra };
}

function batchFor(agent: AgentUnderTest, cases: Array<Record<string, unknown>>, profile: Record<string, unknown> = {}): Record<string, any> {
  return startBody({
    suite: { id: `drivers-${agent.agent}`, prompt: 'Create a file out.txt containing {{word}}' },
    cases,
    variants: [{ harness: agent.kind, model: agent.model, sandbox: 'sandbox_kind_1', profile: { name: agent.agent, ...profile } }],
  });
}

/** The usage the fake answered with, summed over its requests since `from`. */
function answeredSince(fake: FakeProvider, from: number): { input: number; output: number } {
  return fake.requests
    .slice(from)
    .reduce((total, request) => ({ input: total.input + (request.answered?.input ?? 0), output: total.output + (request.answered?.output ?? 0) }), {
      input: 0,
      output: 0,
    });
}

function describeAgents(title: string, agents: AgentUnderTest[], enabled: boolean): void {
  (enabled ? describeWithBubblewrap : describe.skip)(title, () => {
    let fake: FakeProvider;
    let server: ChildServer;
    const installed = new Map<AgentName, string>();

    beforeAll(async () => {
      for (const { agent } of agents) {
        const result = await installForTest(agent);
        if ('failure' in result) process.stderr.write(`Skipping the ${agent} driver tests: ${result.failure}\n`);
        else installed.set(agent, result.version);
      }
      fake = await startFakeProvider();
      server = await startChild({
        ASSAY_DATA_DIR: tempDir(),
        ASSAY_INIT_ORG: 'acme',
        ASSAY_INIT_API_KEY: INIT_KEY,
        ASSAY_CONFIG: config(fake, agents),
        ASSAY_AGENTS_DIR: TEST_AGENTS_DIR,
        FAKE_PROVIDER_KEY: REAL_KEY,
        HOME: tempDir('assay-home-'),
        // A registry behind a proxy may need its authority (the server installs what the test did not).
        ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
      });
    }, 1_200_000);

    afterAll(async () => {
      await server.stop();
      await fake.close();
    });

    describe.each(agents)('$agent', (agent) => {
      const run = (name: string, body: () => Promise<void>, timeoutMs = 240_000) =>
        it(
          name,
          async () => {
            if (!installed.has(agent.agent)) {
              process.stderr.write(`${agent.agent}: not installed, see above\n`);
              return;
            }
            await body();
          },
          timeoutMs,
        );

      run('writes the file verify checks, through the gateway; its usage is what the fake reported, its tool calls are in the trajectory', async () => {
        fake.setDefault(workspaceTask('out.txt', 'hello\n', 'I wrote hello into out.txt.'));
        const from = fake.requests.length;
        const started = await server.client.call('evals.batches.start', batchFor(agent, [agentCase()]));
        expect(started.status).toBe(200);
        const run = (await waitForBatch(server.client, started.body.id, 200_000)).runs[0];
        const trial = run.trials[0];
        expect([trial.status, trial.failure]).toEqual(['passed', null]);
        expect(run.harnessVersion).toBe(AGENT_DRIVERS[agent.agent].pinnedVersion);

        const answered = answeredSince(fake, from);
        expect(answered.input).toBeGreaterThan(0);
        expect(trial.usage).toMatchObject({ inputTokens: answered.input, outputTokens: answered.output });
        const calls = trial.trajectory.filter((entry: any) => entry._tag === 'model-call');
        expect(calls.length).toBe(fake.requests.length - from);
        expect(calls.every((call: any) => call.status === 200 && call.provider === agent.provider)).toBe(true);
        const tools = trial.trajectory.filter((entry: any) => entry._tag === 'tool-call');
        if (SILENT_ABOUT_TOOLS.includes(agent.agent)) expect(tools).toEqual([]);
        else expect(tools[0]).toMatchObject({ turn: 1, tool: expect.any(String), input: expect.stringContaining('hello') });
        // The provider got the real key; the agent only ever held its token.
        for (const request of fake.requests.slice(from)) expect(JSON.stringify(request.headers)).toContain(REAL_KEY);
        expect(JSON.stringify(trial)).not.toContain(REAL_KEY);
      });

      if (AGENT_DRIVERS[agent.agent].resumes) {
        run('holds a 2-turn scripted conversation: turn 2 resumes its session, and its request holds the history', async () => {
          fake.setDefault(workspaceTask('out.txt', 'hello\n', 'Done: out.txt holds hello.'));
          const from = fake.requests.length;
          const replies = { kind: 'scripted', replies: ['Thanks. Please check the file once more.'] };
          const started = await server.client.call('evals.batches.start', batchFor(agent, [agentCase({ user: replies })]));
          const trial = (await waitForBatch(server.client, started.body.id, 200_000)).runs[0].trials[0];
          expect([trial.status, trial.failure]).toEqual(['passed', null]);
          expect(trial).toMatchObject({ turns: 2, endReason: 'replies-exhausted' });
          const messages = trial.trajectory.filter((entry: any) => entry._tag === 'message');
          expect(messages.map((entry: any) => [entry.role, entry.turn])).toEqual([
            ['user', 1],
            ['agent', 1],
            ['user', 2],
            ['agent', 2],
          ]);
          expect(messages[1].text).toContain('Done: out.txt holds hello.');
          const turns = new Set(trial.trajectory.filter((entry: any) => entry._tag === 'model-call').map((entry: any) => entry.turn));
          expect([...turns].sort()).toEqual([1, 2]);
          // The last request of turn 2 carries turn 1: the opening prompt and the new message both.
          const last = JSON.stringify(fake.requests.at(-1)?.body);
          expect(last).toContain('Create a file out.txt containing hello');
          expect(last).toContain('Please check the file once more');
          expect(fake.requests.length - from).toBeGreaterThanOrEqual(3);
        });
      } else {
        run('ends a conversation after its first turn: it cannot resume without a terminal', async () => {
          fake.setDefault(workspaceTask('out.txt', 'hello\n', 'Done.'));
          const replies = { kind: 'scripted', replies: ['again'] };
          const started = await server.client.call('evals.batches.start', batchFor(agent, [agentCase({ user: replies })]));
          const trial = (await waitForBatch(server.client, started.body.id, 200_000)).runs[0].trials[0];
          expect([trial.status, trial.turns, trial.endReason]).toEqual(['passed', 1, 'agent-cannot-continue']);
        });
      }
    });

    it("evals.models.list names each harness kind's agent and the version its trials install", async () => {
      for (const agent of agents) {
        const answer = await server.client.call('evals.models.list', { harness: agent.kind });
        const driver = AGENT_DRIVERS[agent.agent];
        expect(answer.body.agent).toEqual({
          name: agent.agent,
          version: driver.pinnedVersion,
          pinnedVersion: driver.pinnedVersion,
          package: driver.packageName,
          provider: agent.provider,
        });
      }
      expect((await server.client.call('evals.models.list', { harness: 'harness_kind_8' })).body.agent).toBeNull();
    });

    it("a harness connector's key goes to the gateway as the provider key, never into the sandbox", async () => {
      const agent = agents.find((candidate) => installed.has(candidate.agent));
      if (agent === undefined) return;
      const connectorKey = 'sk-harness-connector-key-77aa66bb';
      const added = await server.client.call('connectors.add', {
        integrationId: agent.kind,
        authMethodId: 'api-key',
        name: 'team key',
        values: { apiKey: connectorKey },
        isDefault: true,
      });
      expect(added.status).toBe(200);
      try {
        fake.setDefault(workspaceTask('out.txt', 'hello\n', 'Done.'));
        const from = fake.requests.length;
        const check = agentCase({ verify: 'grep -qx hello out.txt && ! env | grep -q -e ASSAY_HARNESS_ -e sk-harness-connector' });
        const started = await server.client.call('evals.batches.start', batchFor(agent, [check]));
        const trial = (await waitForBatch(server.client, started.body.id, 200_000)).runs[0].trials[0];
        expect([trial.status, trial.failure]).toEqual(['passed', null]);
        const sent = fake.requests.slice(from).map((request) => JSON.stringify(request.headers));
        expect(sent.length).toBeGreaterThan(0);
        for (const headers of sent) {
          expect(headers).toContain(connectorKey);
          expect(headers).not.toContain(REAL_KEY);
        }
        expect(JSON.stringify(trial)).not.toContain(connectorKey);
      } finally {
        await server.client.call('connectors.remove', { id: added.body.id });
      }
    }, 240_000);

    it('a driver trial sees no real key, in its environment or its files, and reaches nothing but the gateway', async () => {
      const agent = agents.find((candidate) => installed.has(candidate.agent) && SHELL_TOOL[candidate.agent] !== undefined);
      if (agent === undefined) return;
      // The agent runs the probe with its own shell tool, in its own turn: what the agent's processes can see and reach.
      const [tool, argument] = SHELL_TOOL[agent.agent]!;
      const command = 'python3 probe.py > probe.txt 2>&1; echo $? > probe.exit; echo hello > out.txt';
      fake.setDefault((request) => {
        if (endsWithToolResult(request.body, request.protocol)) return { text: 'Probed.' };
        return { toolCall: { name: tool, arguments: { [argument]: command, description: 'probe the sandbox' } } };
      });
      const fakePort = new URL(fake.url).port;
      const serverPort = new URL(server.url).port;
      const probe = agentCase({ verify: 'cat probe.txt; grep -qx hello out.txt && grep -qx 0 probe.exit' });
      const env = { PROBE_PORTS: `${fakePort},${serverPort},1,9`, PROBE_GATEWAY_FROM: GATEWAY_VARIABLE[agent.agent], ...probeNeedle(REAL_KEY) };
      const body = batchFor(agent, [probe], { files: { 'probe.py': SANDBOX_PROBE }, env });
      const started = await server.client.call('evals.batches.start', body);
      const trial = (await waitForBatch(server.client, started.body.id, 200_000)).runs[0].trials[0];
      const report = trial.trajectory.filter((entry: any) => entry._tag === 'command').at(-1)?.output ?? '';
      expect([trial.status, trial.failure, report]).toEqual(['passed', null, expect.stringContaining('GATEWAY true')]);
      expect(report).toContain('KEY-FOUND []');
      expect(trial.trajectory.some((entry: any) => entry._tag === 'tool-call' && entry.input.includes('probe.py'))).toBe(true);
    }, 240_000);
  });
}

describeAgents('built-in agent drivers, with the real CLIs in bubblewrap', CI_AGENTS, true);
describeAgents('the drivers tested on demand (ASSAY_TEST_ALL_AGENTS=1)', MORE_AGENTS, process.env.ASSAY_TEST_ALL_AGENTS === '1');

/**
 * What goes wrong around an agent: an install that fails, an agent the sandbox could not clean
 * up after, a provider that fails while the agent says only that its turn failed.
 */
describeWithBubblewrap('agent drivers when something fails', () => {
  let fake: FakeProvider;
  let server: ChildServer;
  let piInstalled: { failure: string } | { version: string };

  beforeAll(async () => {
    piInstalled = await installForTest('pi');
    fake = await startFakeProvider();
    const file = path.join(tempDir(), 'assay.yaml');
    const lines = [
      'allowUnsandboxed: true',
      'sandboxes:',
      '  sandbox_kind_1: { driver: bubblewrap, network: false }',
      '  sandbox_kind_2: { driver: process }',
      'providers:',
      `  anthropic: { protocol: anthropic, baseURL: "${fake.anthropicURL}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
      `  chat: { protocol: openai-compatible, baseURL: "${fake.url}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
      'harnesses:',
      '  harness_kind_1: { agent: pi, provider: anthropic, version: "0.0.1-assay-never-published" }',
      '  harness_kind_2: { agent: cline, provider: chat }',
      '  harness_kind_3: { agent: pi, provider: anthropic }',
      '',
    ];
    fs.writeFileSync(file, lines.join('\n'));
    server = await startChild({
      ASSAY_DATA_DIR: tempDir(),
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_CONFIG: file,
      ASSAY_AGENTS_DIR: TEST_AGENTS_DIR,
      FAKE_PROVIDER_KEY: REAL_KEY,
      HOME: tempDir('assay-home-'),
      ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
    });
  }, 600_000);

  afterAll(async () => {
    await server.stop();
    await fake.close();
  });

  const trialOf = async (kind: string, sandbox: string) => {
    const body = startBody({
      suite: { id: 'failures', prompt: 'Create a file out.txt containing {{word}}' },
      cases: [agentCase()],
      variants: [{ harness: kind, model: 'fake-model', sandbox }],
    });
    const started = await server.client.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    return (await waitForBatch(server.client, started.body.id, 200_000)).runs[0].trials[0];
  };

  it('an install that fails voids the trial with npm’s own words', async () => {
    const trial = await trialOf('harness_kind_1', 'sandbox_kind_1');
    expect(trial.status).toBe('void');
    expect(trial.failure).toContain('installing @mariozechner/pi-coding-agent@0.0.1-assay-never-published failed');
    expect(trial.failure).toMatch(/npm (error|ERR!)/);
    expect(fs.existsSync(path.join(TEST_AGENTS_DIR, 'pi@0.0.1-assay-never-published'))).toBe(false);
  }, 240_000);

  it('the process sandbox refuses an agent that leaves processes behind, saying where it can run', async () => {
    const trial = await trialOf('harness_kind_2', 'sandbox_kind_2');
    expect([trial.status, trial.failure]).toEqual([
      'void',
      'cline leaves processes running after its turn, which the process sandbox cannot end: run it in a bubblewrap sandbox',
    ]);
  });

  it('an agent that exits 0 after its model failed: void naming the provider when the provider failed, failed when the model refused the request', async () => {
    if ('failure' in piInstalled) {
      process.stderr.write(`pi: not installed: ${piInstalled.failure}\n`);
      return;
    }
    fake.setDefault({ status: 500, error: 'upstream is down' });
    const outage = await trialOf('harness_kind_3', 'sandbox_kind_1');
    expect(outage.status).toBe('void');
    expect(outage.failure).toContain('the model provider failed');
    expect(outage.failure).toContain('anthropic');

    fake.setDefault({ status: 400, error: 'prompt is too long' });
    const refused = await trialOf('harness_kind_3', 'sandbox_kind_1');
    expect(refused.status).toBe('failed');
    expect(refused.failure).toMatch(/^pi reported an error in turn 1: .*prompt is too long/);
  }, 240_000);
});
