/**
 * Each built-in agent CLI that CI tests, one trial at a time through a running child server
 * (bubblewrap without a network, the model gateway, the fake provider driving the CLI to write the
 * file verify checks), against the same CLI run bare in the same sandbox with the command line its
 * driver builds (support/bare-agent.ts). Then the install, paid once per version: pi's first trial
 * on an empty agents directory, and its second.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_DRIVERS, AgentInstaller, detectDefaultSandbox } from '#trial-runner';
import type { AgentName } from '#trial-runner';
import { AgentUnderTest, agentServerConfig, CI_AGENTS, TEST_AGENTS_DIR, workspaceTask } from '../test/support/agents';
import { FakeProvider, startFakeProvider } from '../test/support/fake-provider';
import { runBareAgent, SocketRelay } from './support/bare-agent';
import { BenchServer, startBenchServer } from './support/child-server';
import { tempDir } from './support/sqlite-log';
import type { Progress, Suite } from './support/suite';
import { median, Row } from './support/table';

const ROUNDS = Number(process.env.BENCH_AGENTS_ROUNDS ?? 3);
const PROMPT = 'Create a file out.txt containing {{word}}';
const MESSAGE = 'Create a file out.txt containing hello';
const VERIFY = 'grep -qx hello out.txt';
const FAKE_KEY = 'bench-fake-provider-key-0123456789';
const INSTALL_TIMEOUT_MS = 600_000;
/** The agent whose install is timed: the quickest to install. */
const INSTALLED_ONCE: AgentName = 'pi';

/** The agents CI installs and runs (test/e2e/agent-drivers.e2e.ts runs the same). */
const AGENTS = CI_AGENTS;

/** What npm needs to install from a registry behind a proxy (the server passes only these to npm). */
function npmEnv(): Record<string, string> {
  const names = ['HOME', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];
  const kept = Object.entries(process.env).filter(([name]) => names.includes(name) || /^npm_config_/i.test(name) || /^(https?|no)_proxy$/i.test(name));
  return Object.fromEntries(kept.filter((entry): entry is [string, string] => entry[1] !== undefined));
}

interface AssayTrial {
  /** From the start request's send to the batch's finishedAt (the server's clock is this machine's). */
  batchMs: number;
  /** The trial's startedAt to its finishedAt, as the service recorded them. */
  trialMs: number;
}

/** One batch of one trial of the agent, followed on its watch stream; throws unless it passed. */
async function assayTrial(server: BenchServer, agent: AgentUnderTest): Promise<AssayTrial> {
  const started = Date.now();
  const batch = await server.call('evals.batches.start', {
    suite: { id: `bench-agents-${agent.agent}`, prompt: PROMPT },
    cases: [{ id: 'write-hello', variables: { word: 'hello' }, verify: VERIFY }],
    variants: [{ harness: agent.kind, model: agent.model, sandbox: 'sandbox_kind_1', profile: { name: agent.agent } }],
    trials: 1,
  });
  await server.watchUntilEnd(batch.id);
  let finished = await server.call('evals.batches.get', { id: batch.id });
  for (let tries = 0; finished.status === 'running' && tries < 100; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    finished = await server.call('evals.batches.get', { id: batch.id });
  }
  const trial = finished.runs[0].trials[0];
  if (trial.status !== 'passed') throw new Error(`the ${agent.agent} trial ended ${trial.status}: ${trial.failure}`);
  return { batchMs: Date.parse(finished.finishedAt) - started, trialMs: Date.parse(trial.finishedAt) - Date.parse(trial.startedAt) };
}

/** Installs each agent's pinned version where the tests keep them (nothing when there already); those that fail are left out, saying why. */
async function installed(progress: Progress): Promise<Map<AgentName, string>> {
  const installer = new AgentInstaller(TEST_AGENTS_DIR, INSTALL_TIMEOUT_MS);
  const dirs = new Map<AgentName, string>();
  for (const { agent } of AGENTS) {
    const driver = AGENT_DRIVERS[agent];
    const result = await installer.ensure(driver, driver.pinnedVersion);
    if ('failure' in result) progress.log(`${agent} is skipped: ${result.failure}`);
    else dirs.set(agent, result.dir);
  }
  return dirs;
}

interface Side {
  server: BenchServer;
  relay: SocketRelay;
  fakePort: number;
}

/** The agent's rows: Assay and bare by turns (the side that goes first alternates), after one untimed run of each. */
async function agentRows(progress: Progress, side: Side, agent: AgentUnderTest, installDir: string): Promise<Row[]> {
  const driver = AGENT_DRIVERS[agent.agent];
  const bare = () =>
    runBareAgent({ driver, installDir, model: agent.model, protocol: agent.protocol, message: MESSAGE, verify: VERIFY }, side.relay, side.fakePort);
  await assayTrial(side.server, agent);
  await bare();
  const assay: AssayTrial[] = [];
  const bareMs: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    if (round % 2 === 1) bareMs.push(await bare());
    assay.push(await assayTrial(side.server, agent));
    if (round % 2 === 0) bareMs.push(await bare());
    const last = assay[assay.length - 1];
    progress.log(`${agent.agent} round ${round + 1}: Assay ${last.batchMs} ms (trial ${last.trialMs} ms), bare ${bareMs[bareMs.length - 1].toFixed(0)} ms`);
  }
  const benchmark = `${agent.agent} ${driver.pinnedVersion}`;
  const baseline = median(bareMs);
  return [
    {
      benchmark,
      measure: 'ms, start request to batch finished (bare: the CLI in bwrap)',
      value: median(assay.map((trial) => trial.batchMs)),
      baseline,
      target: { kind: 'ratio-at-most', ratio: 1.1 },
    },
    { benchmark, measure: 'ms, trial start to verdict as recorded', value: median(assay.map((trial) => trial.trialMs)), baseline },
  ];
}

/** The install folders of an agents directory and the marker of each, as read now. */
function installsIn(root: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const name of fs.readdirSync(root).filter((entry) => !entry.startsWith('.') && !entry.endsWith('.lock'))) {
    const marker = path.join(root, name, '.assay-agent.json');
    found.set(name, fs.existsSync(marker) ? `${fs.statSync(marker).mtimeMs} ${fs.readFileSync(marker, 'utf8')}` : 'no marker');
  }
  return found;
}

/**
 * pi's first trial on a server whose ASSAY_AGENTS_DIR is empty (it installs the agent from the
 * registry, in the trial), then its second: the install is paid once when the folder holds one
 * install and its marker was written once, before the second trial started.
 */
async function installRows(progress: Progress, fake: FakeProvider, installedMs: number | null): Promise<Row[]> {
  const agent = AGENTS.find((candidate) => candidate.agent === INSTALLED_ONCE)!;
  const agentsDir = tempDir('agents-install');
  const env = { ...npmEnv(), ASSAY_AGENTS_DIR: agentsDir.dir, FAKE_PROVIDER_KEY: FAKE_KEY };
  const server = await startBenchServer({ driver: 'bubblewrap', parallel: 1, config: agentServerConfig(fake, [agent]), env });
  try {
    progress.log(`${agent.agent}: first trial with an empty agents directory (installs ${AGENT_DRIVERS[agent.agent].packageName})`);
    let first: AssayTrial;
    try {
      first = await assayTrial(server, agent);
    } catch (error) {
      progress.log(`the install cost is skipped: ${(error as Error).message}`);
      return [];
    }
    const afterFirst = installsIn(agentsDir.dir);
    const second = await assayTrial(server, agent);
    const afterSecond = installsIn(agentsDir.dir);
    const unchanged = afterFirst.size === 1 && [...afterFirst].every(([name, marker]) => marker !== 'no marker' && afterSecond.get(name) === marker);
    const installs = afterSecond.size + (unchanged ? 0 : 1);
    progress.log(`${agent.agent}: first trial ${first.batchMs} ms, second ${second.batchMs} ms; installs: ${[...afterSecond.keys()].join(', ')}`);
    const benchmark = `${agent.agent} install, paid once`;
    const baseline = installedMs ?? undefined;
    return [
      { benchmark, measure: 'ms, first trial on an empty agents dir (npm install in it)', value: first.batchMs, baseline },
      { benchmark, measure: 'ms, second trial, same server and agents dir', value: second.batchMs, baseline },
      { benchmark, measure: 'installs made by the two trials (marker written once)', value: installs, target: { kind: 'at-most', value: 1, unit: 'install' } },
    ];
  } finally {
    await server.stop();
    agentsDir.remove();
  }
}

export const agentsSuite: Suite = {
  name: 'agents',
  explicit: true,
  description: `One trial at a time of each agent CLI CI tests, through a child server (bubblewrap, no network, the gateway, the fake provider), against the same CLI bare in the same sandbox; median of ${ROUNDS} after one untimed run of each. Then pi's install, paid by its first trial only; baseline: pi's Assay median above.`,
  async run(progress) {
    const sandbox = await detectDefaultSandbox();
    if (sandbox.driver !== 'bubblewrap') throw new Error(`the agents suite needs bubblewrap: ${sandbox.reason}`);
    const dirs = await installed(progress);
    const fake = await startFakeProvider();
    fake.setDefault(workspaceTask('out.txt', 'hello\n', 'I wrote hello into out.txt.'));
    const fakePort = Number(new URL(fake.url).port);
    const relay = await SocketRelay.start(fakePort);
    const rows: Row[] = [];
    try {
      const agents = AGENTS.filter(({ agent }) => dirs.has(agent));
      const env = { ASSAY_AGENTS_DIR: TEST_AGENTS_DIR, FAKE_PROVIDER_KEY: FAKE_KEY };
      const server = await startBenchServer({ driver: 'bubblewrap', parallel: 1, config: agentServerConfig(fake, agents), env });
      try {
        for (const agent of agents) rows.push(...(await agentRows(progress, { server, relay, fakePort }, agent, dirs.get(agent.agent)!)));
      } finally {
        await server.stop();
      }
      const installedMs = rows.find((row) => row.benchmark.startsWith(`${INSTALLED_ONCE} `) && row.target !== undefined)?.value ?? null;
      rows.push(...(await installRows(progress, fake, installedMs)));
    } finally {
      await relay.close();
      await fake.close();
    }
    return rows;
  },
};
