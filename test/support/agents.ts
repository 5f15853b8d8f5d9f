import * as os from 'node:os';
import * as path from 'node:path';
import { AGENT_DRIVERS, AgentInstaller } from '#trial-runner';
import type { AgentName } from '#trial-runner';
import { agentTask } from './fake-agent-model';
import type { FakeAnswer, FakeRequest } from './fake-provider';

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
