import * as os from 'node:os';
import * as path from 'node:path';
import { AGENT_DRIVERS, AgentInstaller } from '#trial-runner';
import type { AgentName, ProviderProtocol } from '#trial-runner';
import { agentTask } from './fake-agent-model';
import type { FakeAnswer, FakeProvider, FakeRequest } from './fake-provider';

/**
 * Where the tests install the real agent CLIs: ASSAY_AGENTS_DIR when set (CI keeps it between
 * runs, outside the clone), else the user's cache, as local mode does. Installs are kept: each
 * pinned version is downloaded once per machine.
 */
export const TEST_AGENTS_DIR = process.env.ASSAY_AGENTS_DIR?.trim() || path.join(os.homedir(), '.cache', 'assay', 'agents');

/** Installs the agent's pinned version with the service's own installer; the npm error when it cannot. */
export async function installForTest(agent: AgentName): Promise<{ dir: string; version: string } | { failure: string }> {
  const driver = AGENT_DRIVERS[agent];
  return new AgentInstaller(TEST_AGENTS_DIR, 600_000).ensure(driver, driver.pinnedVersion);
}

/** A trial's workspace as the agents name it in their requests (their system prompts give their working directory). */
const WORKSPACE = /\/[^\s"'\\<>]*\/sbx_[0-9a-f]{16}\/workspace/;

/**
 * The fake model's answers for an agent task in a trial's workspace: write `file` with the
 * agent's own writer tool, then say `finalText`. Each call's usage is distinct (input 1000+n,
 * output 50+n), so totals show who sums.
 */
export function workspaceTask(file: string, content: string, finalText: string): (request: FakeRequest) => FakeAnswer {
  let calls = 0;
  return (request) => {
    calls += 1;
    const n = calls;
    const workspace = WORKSPACE.exec(JSON.stringify(request.body))?.[0] ?? '.';
    return agentTask({ path: path.posix.join(workspace, file), content, finalText, usage: () => ({ input: 1000 + n, output: 50 + n }) })(request);
  };
}

/** An agent as the tests and the agents bench run it: on a harness kind of its own, with a provider of the protocol it speaks. */
export interface AgentUnderTest {
  agent: AgentName;
  kind: string;
  provider: string;
  protocol: ProviderProtocol;
  model: string;
}

/** The agents CI installs and runs every time. */
export const CI_AGENTS: AgentUnderTest[] = [
  { agent: 'claude-code', kind: 'harness_kind_1', provider: 'anthropic', protocol: 'anthropic', model: 'claude-sonnet-4-5' },
  { agent: 'codex', kind: 'harness_kind_2', provider: 'responses', protocol: 'openai-responses', model: 'gpt-5.1-codex' },
  { agent: 'gemini-cli', kind: 'harness_kind_3', provider: 'gemini', protocol: 'gemini', model: 'gemini-2.5-flash' },
  { agent: 'opencode', kind: 'harness_kind_4', provider: 'chat', protocol: 'openai-compatible', model: 'fake-model' },
  { agent: 'qwen-code', kind: 'harness_kind_5', provider: 'chat', protocol: 'openai-compatible', model: 'fake-model' },
  { agent: 'pi', kind: 'harness_kind_6', provider: 'anthropic', protocol: 'anthropic', model: 'fake-model' },
];

/** The lines of an ASSAY_CONFIG running `agents` in bubblewrap without a network, each provider the fake (its key in FAKE_PROVIDER_KEY). */
export function agentServerConfig(fake: FakeProvider, agents: readonly AgentUnderTest[]): string[] {
  return [
    'sandboxes:',
    '  sandbox_kind_1: { driver: bubblewrap, network: false }',
    'providers:',
    `  anthropic: { protocol: anthropic, baseURL: "${fake.anthropicURL}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
    `  responses: { protocol: openai-responses, baseURL: "${fake.url}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
    `  gemini: { protocol: gemini, baseURL: "${fake.geminiURL}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
    `  chat: { protocol: openai-compatible, baseURL: "${fake.url}", apiKeyEnv: FAKE_PROVIDER_KEY }`,
    'harnesses:',
    ...agents.map(({ agent, kind, provider }) => `  ${kind}: { agent: ${agent}, provider: ${provider} }`),
  ];
}
