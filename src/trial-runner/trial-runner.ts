/**
 * The TrialRunner that runs one trial for real: a sandbox driver (bubblewrap or a plain process)
 * and a harness driver (`command`, or a `harness_kind_N` from the operator's configuration).
 *
 * Steps: create the trial's sandbox directory; materialize the source (empty, files, or a git
 * clone at a ref); restore the cache; write the profile's files; run the harness driver's and the
 * profile's install; save the cache; run the harness with the rendered prompt; verify.
 *
 * The trajectory holds only commands actually run in the sandbox: `git clone` and `git checkout`,
 * the installs, the harness and verify. The in-process steps (directory, files, cache, snapshots)
 * are not commands, and the saga derives the trial's `commands` and `failedCommands` from the
 * trajectory, so listing them would count work that no process did.
 *
 * Configuration gaps ("harness_kind_N has no driver configured on this server", and the same for
 * an unmapped sandbox kind) void the trial with serviceFault false: the trial was examined and
 * voided for a reason the operator can fix, and a run is `failed` only when every trial broke
 * inside the service itself (a failed spawn, a sandbox that could not start, a full disk).
 */
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { HostLookup, systemLookup } from './clone-guard';
import type { CloneHost } from './repository-urls';
import { EMPTY_EXECUTION_CONFIG, ExecutionConfig, SandboxDriverName } from './execution-config';
import { GatewayGrant, sharedModelGateway } from './gateway/model-gateway';
import { AgentRun, HarnessPlan, resolveHarness } from './harness/harness-driver';
import { AgentInstaller, InstalledAgent } from './harness/agents/agent-install';
import { writeHomeFiles } from './harness/agents/home-files';
import { providerIntegration, providerTimeoutMs, resolveProviderKey } from './providers/model-client';
import { failureLine, Redactor } from './output/captured-output';
import { unsandboxedRefusal } from './operator-safety';
import { detectDefaultSandbox } from './sandbox/default-sandbox';
import { AGENT_MOUNT, BubblewrapDriver, isInside, processDriver, SandboxDriver } from './sandbox/sandbox-driver';
import { TrialUsers } from './sandbox/trial-user';
import { TrialOutcome, TrialRunner, TrialSpec, voidOutcome } from './contract';
import { callPrice, RunnerSettings, TrialLogger, TrialSession } from './trial-session';
import { setUpWorkspace, urlCredentials } from './trial-setup';
import { agentEnv, HARNESS_CONNECTOR_KEY } from './trial-turns';
import { holdConversation } from './conversation/conversation';
import { conversationUser } from './conversation/users';
import type { ConversationUser } from './conversation/conversation-user';
import { runPrepare } from './validation/run-prepare';
import { decideTrial } from './validation/verdict';
import { renderPrompt } from '#shared/eval-definitions';
import { internalFault, TrialFailed, TrialVoid, Verdict } from './trial-verdict';
import type { ArtifactSealer } from './workspace/artifacts';
import { createTrialDirectory, removeTrialDirectory, spreadTrialDirectories, TrialDirectory } from './workspace/trial-directory';
import { Clock, systemClock } from '#shared/clock';

export interface TrialRunnerOptions {
  dataDir: string;
  config?: ExecutionConfig;
  /** Per captured output (ASSAY_OUTPUT_CAP); default 65536. */
  outputCapBytes?: number;
  /** ASSAY_VERIFY_TIMEOUT_MS; default 300000. */
  verifyTimeoutMs?: number;
  /** ASSAY_VALIDATOR_TIMEOUT_MS; default 120000. */
  validatorTimeoutMs?: number;
  installTimeoutMs?: number;
  cloneTimeoutMs?: number;
  /** Where trial directories are made; default `<os tmpdir>/assay-trials`. Must be outside dataDir. */
  trialsRoot?: string;
  /** More host paths hidden from bubblewrap sandboxes (key files), besides the config's. */
  hiddenPaths?: string[];
  /** How a repository's host is resolved before a clone; default the system resolver. */
  lookupHost?: HostLookup;
  logger?: TrialLogger;
  /** Encrypts artifacts at rest (the server's seals under the organization's data key); without one they are kept unencrypted. */
  artifactSealer?: ArtifactSealer;
  /** Where the trial's times come from; default the system clock. */
  clock?: Clock;
  /** ASSAY_AGENTS_DIR: where built-in agents are installed, once per version; default `<dataDir>/agents`. */
  agentsDir?: string;
  /** Where the trials run: `local` in the command line's local mode, on the user's machine; default the server. Messages name the place. */
  runsOn?: CloneHost;
}

export const DEFAULT_OUTPUT_CAP_BYTES = 65_536;
export const DEFAULT_VERIFY_TIMEOUT_MS = 300_000;
export const DEFAULT_VALIDATOR_TIMEOUT_MS = 120_000;
export const DEFAULT_INSTALL_TIMEOUT_MS = 900_000;
export const DEFAULT_CLONE_TIMEOUT_MS = 120_000;

export function createTrialRunner(options: TrialRunnerOptions): TrialRunner {
  const dataDir = path.resolve(options.dataDir);
  const trialsRoot = path.resolve(options.trialsRoot ?? path.join(tmpdir(), 'assay-trials'));
  if (isInside(trialsRoot, dataDir)) throw new Error(`the trials directory ${trialsRoot} must be outside the data directory ${dataDir}`);
  const config = options.config ?? EMPTY_EXECUTION_CONFIG;
  const hidden = [dataDir, ...config.hiddenPaths, ...(options.hiddenPaths ?? []), trialsRoot];
  const settings: RunnerSettings = {
    dataDir,
    trialsRoot,
    hiddenPaths: hidden,
    config,
    outputCapBytes: options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
    verifyTimeoutMs: options.verifyTimeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS,
    validatorTimeoutMs: options.validatorTimeoutMs ?? DEFAULT_VALIDATOR_TIMEOUT_MS,
    installTimeoutMs: options.installTimeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS,
    cloneTimeoutMs: options.cloneTimeoutMs ?? DEFAULT_CLONE_TIMEOUT_MS,
    lookupHost: options.lookupHost ?? systemLookup,
    runsOn: options.runsOn ?? 'server',
    logger: options.logger ?? null,
    clock: options.clock ?? systemClock,
    artifactSealer: options.artifactSealer ?? null,
    agentInstaller: new AgentInstaller(path.resolve(options.agentsDir ?? path.join(dataDir, 'agents')), options.installTimeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS),
  };
  return new SandboxTrialRunner(settings, { bubblewrap: new BubblewrapDriver(hidden), process: processDriver });
}

export class SandboxTrialRunner implements TrialRunner {
  private readonly users = new TrialUsers();

  constructor(
    private readonly settings: RunnerSettings,
    private readonly drivers: Record<SandboxDriverName, SandboxDriver>,
  ) {
    // A root not there yet is made, and marked, by the first trial.
    if (existsSync(settings.trialsRoot)) spreadTrialDirectories(settings.trialsRoot);
  }

  async run(spec: TrialSpec, signal?: AbortSignal, onOutcome?: (outcome: TrialOutcome) => void): Promise<TrialOutcome> {
    const plan = resolveHarness(spec, this.settings.config);
    const gateway = 'failure' in plan ? null : await this.gatewayFor(spec, plan);
    try {
      return await this.runWith(spec, plan, gateway, signal, onOutcome);
    } finally {
      // The trial's token is refused from now on.
      if (gateway !== null && !('failure' in gateway)) gateway.revoke();
    }
  }

  private async runWith(
    spec: TrialSpec,
    plan: HarnessPlan | { failure: string },
    gateway: GatewayGrant | { failure: string } | null,
    signal?: AbortSignal,
    onOutcome?: (outcome: TrialOutcome) => void,
  ): Promise<TrialOutcome> {
    const conversation = conversationUser(spec, this.settings.config);
    const keys = [...Object.values(spec.providerKeys), ...('apiKey' in conversation && conversation.apiKey !== null ? [conversation.apiKey] : [])];
    const redactor = new Redactor([...spec.secrets, ...keys, ...(spec.source.kind === 'repo' ? urlCredentials(spec.source.url) : [])]);
    if ('failure' in plan) return unstarted(new TrialVoid(plan.failure, ['harness']), redactor, null);
    if (gateway !== null && 'failure' in gateway) return unstarted(new TrialVoid(gateway.failure, ['model']), redactor, plan.version);
    if ('failure' in conversation) return unstarted(new TrialVoid(conversation.failure, ['user']), redactor, plan.version);
    const sandbox = await this.sandboxFor(spec.sandbox);
    if ('failure' in sandbox) return unstarted(new TrialVoid(sandbox.failure, ['sandbox']), redactor, plan.version);
    const agent = plan.agent === null ? null : await this.agentFor(plan.agent, sandbox.driver);
    if (agent !== null && 'failure' in agent) return unstarted(new TrialVoid(agent.failure, ['harness']), redactor, plan.version);
    const startedAt = this.settings.clock.now().getTime();
    const id = `sbx_${randomBytes(8).toString('hex')}`;
    // The process driver isolates nothing: its trials run as the server, as they always did.
    const user = sandbox.driver.name === 'bubblewrap' ? this.users.take() : null;
    let directory: TrialDirectory;
    try {
      directory = await createTrialDirectory(this.settings.trialsRoot, id, user);
    } catch (error) {
      this.users.give(user);
      const fault = new TrialVoid(`cannot create the trial workspace: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, ['sandbox'], {
        serviceFault: true,
      });
      return unstarted(fault, redactor, plan.version);
    }
    const session = new TrialSession(spec, this.settings, { ...sandbox, id, user }, directory, redactor, signal);
    session.gateway = gateway;
    if (plan.agent !== null && agent !== null && gateway !== null) setUpAgent(session, plan, plan.agent, agent.dir, gateway);
    session.openSandbox();
    const verdict = providerVerdict(await this.execute(session, plan, conversation.user), gateway);
    await session.settleDiff();
    // A refused key of the harness's own connector marks that connector invalid, as a refused template harness's does.
    if (gateway?.keyRefused === true && harnessConnectorKey(spec) !== null) session.authFailed = true;
    const measured = session.outcome(verdict, plan.version, this.settings.clock.now().getTime() - startedAt);
    const outcome = { ...measured, sandboxDriver: sandbox.driver.name, failure: verdict.failure === null ? null : failureLine(verdict.failure, redactor) };
    // Every process of the trial has ended: the caller records the outcome while the directory goes.
    onOutcome?.(outcome);
    // Its sandbox session, if any, ran nothing of the trial since its last command ended; it goes before the directory.
    await session.closeSandbox();
    await removeTrialDirectory(directory).catch((error: unknown) =>
      this.settings.logger?.warn('trial directory not removed', { trialId: spec.trialId, reason: (error as Error).message }),
    );
    // Given back only once the directory is gone: no file of this trial is left to the next owner.
    this.users.give(user);
    return outcome;
  }

  /**
   * The trial's grant of the model gateway when its harness names a provider: the provider must
   * be configured and have a key (the server variable its apiKeyEnv names, else the
   * organization's connector); the key stays in the gateway.
   */
  private async gatewayFor(spec: TrialSpec, plan: HarnessPlan): Promise<GatewayGrant | { failure: string } | null> {
    if (plan.provider === null) return null;
    const { providers } = this.settings.config;
    const provider = Object.hasOwn(providers, plan.provider) ? providers[plan.provider] : undefined;
    if (provider === undefined) return { failure: `the agent's model provider "${plan.provider}" is not configured on this server (ASSAY_CONFIG providers)` };
    // The harness's own connector, when the variant has one, is the most specific key: it goes to the gateway, never the sandbox.
    const harnessKey = harnessConnectorKey(spec);
    const resolved = harnessKey === null ? resolveProviderKey(provider, spec.providerKeys[providerIntegration(provider.protocol)]) : { key: harnessKey };
    if ('failure' in resolved) return { failure: `the agent cannot reach its model: ${resolved.failure}` };
    let timeoutMs: number;
    try {
      timeoutMs = providerTimeoutMs(provider);
    } catch (error) {
      return { failure: (error as Error).message };
    }
    const gateway = await sharedModelGateway();
    const { prices } = this.settings.config;
    const budget = spec.profile?.budget ?? null;
    // From a server variable when its apiKeyEnv is set there (resolveProviderKey's order), else from the connector.
    const fromServer = provider.apiKeyEnv !== null && (process.env[provider.apiKeyEnv]?.trim() ?? '') !== '';
    const keyConnector = harnessKey !== null || fromServer || resolved.key === null ? null : providerIntegration(provider.protocol);
    return gateway.grant({
      trialId: spec.trialId,
      provider,
      apiKey: resolved.key ?? '',
      timeoutMs,
      budget,
      keyConnector,
      recordBodies: this.settings.config.gateway.recordBodies,
      replay: spec.replay ?? null,
      price: (call) => callPrice(prices, call),
    });
  }

  private async execute(session: TrialSession, plan: HarnessPlan, user: ConversationUser | null): Promise<Verdict> {
    try {
      if (plan.agent?.setup) await writeHomeFiles(session.directory.home, plan.agent.driver.homeFiles(plan.agent.setup), session.sandbox.user);
      let env = agentEnv(session, plan);
      await setUpWorkspace(session, plan, env);
      const prepared = await runPrepare(session);
      // A built-in agent's commands take the turn's message as it is: only a template of the operator's is rendered again.
      if (session.spec.prepare !== null && plan.agent === null) {
        // The opening prompt's {{prepare.key}} placeholders, filled: the harness and its environment follow.
        session.preparedVariables = prepared;
        session.spec = { ...session.spec, prompt: renderPrompt(session.spec.prompt, prepared) };
        const rendered = resolveHarness(session.spec, this.settings.config);
        if ('failure' in rendered) throw new TrialVoid(rendered.failure, ['harness']);
        plan = rendered;
        env = agentEnv(session, plan);
      }
      const decided = await holdConversation(session, plan, env, user);
      return decided ?? (await decideTrial(session, env));
    } catch (error) {
      if (error instanceof TrialVoid || error instanceof TrialFailed) return error.verdict;
      this.settings.logger?.warn('trial failed inside the service', {
        trialId: session.spec.trialId,
        error: String((error as Error | null | undefined)?.stack ?? error),
      });
      return internalFault(error).verdict;
    }
  }

  /**
   * The agent's install, made (or waited for) before the trial's sandbox exists; an agent known to
   * leave processes behind is refused where nothing would end them.
   */
  private async agentFor(run: AgentRun, driver: SandboxDriver): Promise<InstalledAgent | { failure: string }> {
    if (run.driver.leavesDaemons && driver.name === 'process') {
      return { failure: `${run.driver.name} leaves processes running after its turn, which the process sandbox cannot end: run it in a bubblewrap sandbox` };
    }
    const installer = this.settings.agentInstaller;
    if (installer === undefined) return { failure: `${run.driver.name} cannot be installed by this runner (no agents directory)` };
    return installer.ensure(run.driver, run.version);
  }

  private async sandboxFor(kind: string | null): Promise<{ driver: SandboxDriver; network: boolean } | { failure: string }> {
    const { config } = this.settings;
    if (kind === null) {
      const chosen = await detectDefaultSandbox(config.defaultSandbox);
      // The start refuses such batches; this catches those started before (or by another server).
      if (chosen.driver === 'process' && !config.allowUnsandboxed) return { failure: unsandboxedRefusal(null) };
      return { driver: this.drivers[chosen.driver], network: config.network };
    }
    const definition = Object.hasOwn(config.sandboxes, kind) ? config.sandboxes[kind] : undefined;
    if (definition === undefined) return { failure: `${kind} has no driver configured on this server` };
    if (definition.driver === 'process' && !config.allowUnsandboxed) return { failure: unsandboxedRefusal(kind) };
    return { driver: this.drivers[definition.driver], network: definition.network ?? config.network };
  }
}

/**
 * A trial that did not pass while the gateway saw its provider fail (a 5xx, no answer, a refused
 * key) is the machinery's failure, not the agent's: void, naming the provider and its error.
 */
function providerVerdict(verdict: Verdict, gateway: GatewayGrant | null): Verdict {
  if (gateway === null) return verdict;
  // A strict replay that could not answer a call measured nothing of the agent: void, naming the call.
  if (gateway.replayMiss !== null && verdict.status !== 'void') {
    return {
      ...verdict,
      status: 'void',
      failure: `the replay has no recorded answer for a call to ${gateway.replayMiss}`,
      voidFields: ['model'],
      serviceFault: false,
    };
  }
  // An agent that spends too much has failed, as one that is too slow has.
  const over = gateway.overBudget;
  if (over !== null && verdict.status !== 'void') return { ...verdict, status: 'failed', failure: `the agent exceeded its budget: ${over}` };
  if (verdict.status === 'passed' || gateway.failures.length === 0) return verdict;
  return { status: 'void', failure: `the model provider failed: ${gateway.failures[0]}`, voidFields: ['model'], serviceFault: false, timed: verdict.timed };
}

/**
 * What a built-in agent's commands and settings need: its program as the sandbox sees it, the
 * trial's directories, the model, and the gateway; its environment under the operator's.
 */
function setUpAgent(session: TrialSession, plan: HarnessPlan, run: AgentRun, installDir: string, gateway: GatewayGrant): void {
  const root = session.sandbox.driver.name === 'bubblewrap' ? AGENT_MOUNT : installDir;
  session.agentInstall = installDir;
  run.setup = {
    bin: path.join(root, 'node_modules', '.bin', run.driver.bin),
    home: session.directory.home,
    workspace: session.directory.workspace,
    model: session.spec.model,
    gatewayUrl: gateway.url,
    gatewayToken: gateway.token,
    protocol: gateway.provider.protocol,
  };
  plan.env = { ...run.driver.env(run.setup), ...plan.env };
}

/** The variant's harness connector key (the service's ASSAY_HARNESS_API_KEY), or null. */
function harnessConnectorKey(spec: TrialSpec): string | null {
  const key = Object.hasOwn(spec.env, HARNESS_CONNECTOR_KEY) ? spec.env[HARNESS_CONNECTOR_KEY].trim() : '';
  return key === '' ? null : key;
}

/** The outcome of a trial voided before any sandbox existed. */
function unstarted(reason: TrialVoid, redactor: Redactor, harnessVersion: string | null): TrialOutcome {
  const { voidFields, serviceFault } = reason.verdict;
  return voidOutcome({ failure: failureLine(reason.failure, redactor), voidFields, serviceFault, harnessVersion });
}
