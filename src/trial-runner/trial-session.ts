import type { HostLookup } from './clone-guard';
import type { CloneHost } from './repository-urls';
import type { ExecutionConfig } from './execution-config';
import { OutputCollector, Redactor } from './output/captured-output';
import { LimitHit, limitHit } from './limit-hits';
import { GATEWAY_FORWARDER, GATEWAY_SOCKET, SandboxDriver, SandboxLaunchOptions } from './sandbox/sandbox-driver';
import * as path from 'node:path';
import { CommandResult, runCommand } from './sandbox/sandboxed-command';
import { SandboxSession } from './sandbox/sandbox-session';
import { fitsSession } from './sandbox/session-protocol';
import type { TrialUser } from './sandbox/trial-user';
import type { JudgeModelUse } from './validation/judge';
import type { ValidationRecord } from './validation/validation-record';
import type {
  AgentModelUse,
  ModelCallBodies,
  ConversationEndReason,
  TrajectoryEntry,
  TrajectoryModelCall,
  TrialArtifact,
  TrialDiff,
  TrialOutcome,
  TrialSpec,
  TrialUsage,
} from './contract';
import { priceOf } from './providers/model-client';
import type { ModelPrice } from './providers/provider-config';
import type { GatewayGrant } from './gateway/model-gateway';
import type { UserModelUse } from './conversation/conversation-user';
import { interrupted, TrialVoid, Verdict } from './trial-verdict';
import type { ArtifactSealer } from './workspace/artifacts';
import { TRIAL_ACCOUNT, TrialDirectory, trialDiskUsage } from './workspace/trial-directory';
import type { Clock } from '#shared/clock';
import type { AgentInstaller } from './harness/agents/agent-install';

export interface TrialLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** The runner's fixed settings, shared by every trial. */
export interface RunnerSettings {
  dataDir: string;
  trialsRoot: string;
  /** What no trial sees, whatever its driver: the data directory, the trials root, the operator's and the caller's hidden paths. */
  hiddenPaths: readonly string[];
  config: ExecutionConfig;
  outputCapBytes: number;
  verifyTimeoutMs: number;
  /** ASSAY_VALIDATOR_TIMEOUT_MS: how long a validator or a prepare may run. */
  validatorTimeoutMs: number;
  installTimeoutMs: number;
  cloneTimeoutMs: number;
  /** Resolves a repository's host before the clone (the system resolver; tests give their own). */
  lookupHost: HostLookup;
  logger: TrialLogger | null;
  /** Where the trial's times come from. */
  clock: Clock;
  /** Where the trials run: the server, or the user's machine in local mode (messages name it). Default: the server. */
  runsOn?: CloneHost;
  /** Installs the built-in agents (ASSAY_AGENTS_DIR); absent: a trial of one is voided, saying so. */
  agentInstaller?: AgentInstaller;
  /** Absent or null: artifacts are kept unencrypted (a runner without keys). */
  artifactSealer?: ArtifactSealer | null;
}

export interface StepOptions {
  env: Record<string, string>;
  timeoutMs: number;
  stdin?: string;
  /** The command as the trajectory shows it, when the one run holds something to hide. */
  display?: string;
  /** Bytes of the output's end kept beyond the cap (for reading usage). */
  tailBytes?: number;
  /** The clone reaches the network (and reads a local repository, bound read-only): it gets a sandbox of its own. */
  cloneAccess?: boolean;
  /**
   * The agent's turn: the one step that reaches the model gateway in a sandbox without a network
   * (the forwarder starts before it). Set-up and verify are not the agent: they get no model.
   */
  agentTurn?: boolean;
  /** Host directories the step reads, bound read-only (a local repository, for the clone). */
  readOnlyPaths?: readonly string[];
}

export interface StepResult extends CommandResult {
  output: string;
  /** The output kept in memory, unredacted and uncapped: for reading usage, never for display. */
  keptText: string;
  /** The trial limit the step hit (see limit-hits.ts); null when none. */
  limit: LimitHit | null;
}

/**
 * One trial in progress: its sandbox and directory, and everything recorded so far. Every
 * command run in the sandbox goes through `step`, which records it in the trajectory.
 */
export class TrialSession {
  readonly trajectory: TrajectoryEntry[] = [];
  /** The trial's access to its model through the model gateway; null when its harness names no provider. */
  gateway: GatewayGrant | null = null;
  /** A built-in agent's install on the host (bound read-only into the sandbox); null for other harnesses. */
  agentInstall: string | null = null;
  /** The conversation so far, as validators and the simulated user see it. */
  readonly conversation: Array<{ role: 'user' | 'agent'; text: string }> = [];
  /** The agent's last message: its driver's final answer, else its output's tail; null before its first turn. */
  finalMessage: string | null = null;
  /** How the conversation ended; null until it did (or when the trial ended before it could). */
  ending: { turns: number; endReason: ConversationEndReason } | null = null;
  /** The simulated user's model use; null without one. */
  userModel: UserModelUse | null = null;
  readonly verifySteps: Array<{ command: string; exitCode: number }> = [];
  readonly validations: ValidationRecord[] = [];
  /** What the case's prepare returned as `prepare.` prompt variables; empty before it ran. */
  preparedVariables: Record<string, string> = {};
  /** The judge calls' model use; null when no judge was called. */
  judgeUse: JudgeModelUse | null = null;
  filesChanged: string[] = [];
  artifacts: TrialArtifact[] = [];
  diff: TrialDiff | null = null;
  /** The patch being made while verify runs (recordChanges); `diff` once settleDiff has waited for it. */
  diffMaking: Promise<TrialDiff | null> | null = null;
  exitCode: number | null = null;
  usage: TrialUsage | null = null;
  /** The harness driver detected that its credentials were refused. */
  authFailed = false;
  /** A limit the agent's turn seems to have hit (read from its output): the failure if verify fails. */
  agentLimit: string | null = null;
  modelMs = 0;
  verifyMs = 0;
  /** The sandbox the trial's commands run in, when its driver keeps one for the whole trial (being started, or started). */
  private sandboxSession: Promise<SandboxSession | null> | null = null;

  constructor(
    /** Replaced once, when the prepare's variables fill the opening prompt. */
    public spec: TrialSpec,
    readonly settings: RunnerSettings,
    readonly sandbox: { driver: SandboxDriver; network: boolean; id: string; user: TrialUser | null },
    readonly directory: TrialDirectory,
    readonly redactor: Redactor,
    readonly signal: AbortSignal | undefined,
  ) {}

  async step(command: string, options: StepOptions): Promise<StepResult> {
    if (this.signal?.aborted) throw interrupted();
    const collector = new OutputCollector(this.settings.outputCapBytes, options.tailBytes ?? 0, this.redactor.longestSecretBytes);
    const result = await this.runInSandbox(command, options, collector);
    if (result.aborted) throw interrupted();
    if (result.startErrorCode === 'E2BIG') {
      // The case's own text (a huge prompt in a template) is too large to exec: not our fault.
      throw new TrialVoid(`cannot start "${firstWords(options.display ?? command)}": the command or its environment is too large (E2BIG)`, ['harness']);
    }
    if (result.startFailure !== null) throw new TrialVoid(result.startFailure, ['sandbox'], { serviceFault: true });
    const { output, truncated } = collector.finish(this.redactor);
    this.trajectory.push({
      _tag: 'command',
      command: this.redactor.redact(options.display ?? command),
      exitCode: result.status,
      startedAtMillis: result.startedAtMillis,
      finishedAtMillis: result.finishedAtMillis,
      output,
      outputTruncated: truncated,
    });
    const directoryBytes = await trialDiskUsage(this.directory);
    const limit = limitHit({ status: result.status, output }, this.settings.config.limits, directoryBytes, this.sandbox.driver.name === 'bubblewrap');
    return { ...result, output, keptText: options.tailBytes ? collector.keptText() : '', limit };
  }

  /** Ends the trial's sandbox session, if it has one: after its last command, before its directory goes. */
  async closeSandbox(): Promise<void> {
    const session = this.sandboxSession;
    this.sandboxSession = null;
    await (await session?.catch(() => null))?.close();
  }

  /**
   * Starts the trial's sandbox session, when its driver keeps one, without waiting for it: its
   * set-up (namespaces, mounts) then overlaps the service's own work before the first command.
   */
  openSandbox(): void {
    this.sandboxSession ??= this.startSession().catch(() => null);
  }

  /**
   * In the trial's sandbox session when its driver keeps one (the clone, which sees more of the
   * host, and a command or environment a step file cannot carry unchanged get a sandbox of their
   * own), else in a sandbox of its own as before sessions.
   */
  private async runInSandbox(given: string, options: StepOptions, collector: OutputCollector): Promise<CommandResult> {
    const launchOptions: SandboxLaunchOptions = {
      trialDir: this.directory.root,
      workspace: this.directory.workspace,
      network: options.cloneAccess === true || this.sandbox.network,
      user: this.sandbox.user,
      limits: this.settings.config.limits,
      gateway: this.gatewayMounts(),
      agent: this.agentInstall,
      readOnly: options.readOnlyPaths ?? [],
    };
    const forwards = !launchOptions.network && launchOptions.gateway !== null && options.agentTurn === true;
    const command = forwards ? forwardingFirst(given, this.gateway?.port ?? 0) : given;
    const stdin = options.stdin ?? null;
    const session = fitsSession(command, options.env) && options.cloneAccess !== true ? await this.session() : null;
    if (session !== null) return session.run({ command, env: options.env, stdin, timeoutMs: options.timeoutMs, signal: this.signal, collector });
    const launch = this.sandbox.driver.launch(command, launchOptions);
    return runCommand({ launch, env: options.env, stdin, timeoutMs: options.timeoutMs, signal: this.signal, collector, clock: this.settings.clock });
  }

  /** What a bubblewrap sandbox without a network binds to reach the gateway; null without a gateway or with a network. */
  private gatewayMounts(): { socket: string; forwarder: string } | null {
    if (this.gateway === null || this.sandbox.driver.name !== 'bubblewrap' || this.sandbox.network) return null;
    return { socket: this.gateway.socket, forwarder: GATEWAY_FORWARDER_SOURCE };
  }

  /** The running session, or a new one when the last was killed (a timeout) or there was none. */
  private async session(): Promise<SandboxSession | null> {
    const current = await this.sandboxSession;
    if (current?.usable === true) return current;
    await this.closeSandbox();
    this.sandboxSession = this.startSession();
    return this.sandboxSession;
  }

  private async startSession(): Promise<SandboxSession | null> {
    const options: SandboxLaunchOptions = {
      trialDir: this.directory.root,
      workspace: this.directory.workspace,
      network: this.sandbox.network,
      user: this.sandbox.user,
      limits: this.settings.config.limits,
      gateway: this.gatewayMounts(),
      agent: this.agentInstall,
    };
    const launch = this.sandbox.driver.sessionLaunch?.(options, this.directory.control) ?? null;
    return launch === null ? null : SandboxSession.start(launch, this.directory.control, { clock: this.settings.clock });
  }

  /** A turn's message, in the trajectory between the commands and in the conversation. */
  recordMessage(role: 'user' | 'agent', turn: number, text: string): void {
    this.trajectory.push({ _tag: 'message', role, turn, text, at: this.settings.clock.now().getTime() });
    this.conversation.push({ role, text });
    if (role === 'agent') this.finalMessage = text;
  }

  /** Takes back the last message recorded (one whose turn never started). */
  retractMessage(): void {
    this.trajectory.pop();
    this.conversation.pop();
  }

  endConversation(turns: number, endReason: ConversationEndReason): void {
    this.ending = { turns, endReason };
    this.trajectory.push({ _tag: 'conversation', turns, endReason });
  }

  /** The environment of every step: a fresh base, never the service's own (it holds keys). */
  baseEnv(): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: this.directory.home,
      TMPDIR: this.directory.tmp,
      LANG: process.env.LANG ?? 'C.UTF-8',
      ...(this.sandbox.user === null ? {} : { USER: TRIAL_ACCOUNT, LOGNAME: TRIAL_ACCOUNT }),
    };
  }

  /**
   * The agent's metered model use, with what its own output reported beside it: a difference of
   * more than 1 % of the tokens is logged (the agent's report is not what is counted).
   */
  private agentModel(gateway: GatewayGrant): AgentModelUse {
    const use = agentModelUse(gateway, this.settings.config.prices);
    if (this.usage === null) return use;
    const reported = this.usage.inputTokens + this.usage.outputTokens + this.usage.cacheReadTokens + this.usage.cacheWriteTokens;
    const metered = use.totalTokens;
    if (Math.abs(reported - metered) > 0.01 * Math.max(reported, metered)) {
      this.settings.logger?.warn('the agent reported other token usage than the gateway measured', { trialId: this.spec.trialId, reported, metered });
    }
    return { ...use, reported: this.usage };
  }

  /** The recorded bodies, redacted, in the order withModelCalls puts the calls in the trajectory. */
  private recordedBodies(gateway: GatewayGrant): ModelCallBodies[] {
    const order = gateway.calls.map((call, index) => ({ at: call.startedAtMillis, index })).sort((a, b) => a.at - b.at);
    return order.map(({ index }) => {
      const { request, response, truncated } = gateway.bodies[index];
      return { request: this.redactor.redact(request), response: this.redactor.redact(response), truncated };
    });
  }

  /** Waits for the patch made while verify ran. */
  async settleDiff(): Promise<void> {
    if (this.diffMaking === null) return;
    this.diff = await this.diffMaking;
    this.diffMaking = null;
  }

  outcome(verdict: Verdict, harnessVersion: string | null, totalMs: number): TrialOutcome {
    return {
      status: verdict.status,
      exitCode: this.exitCode,
      failure: verdict.failure,
      voidFields: verdict.voidFields,
      serviceFault: verdict.serviceFault,
      timed: verdict.timed,
      trajectory: this.gateway === null ? this.trajectory : withModelCalls(this.trajectory, this.gateway.calls),
      ...(this.gateway?.bodies.length ? { modelCallBodies: this.recordedBodies(this.gateway) } : {}),
      verifySteps: this.verifySteps,
      validations: this.validations,
      judgeModel: this.judgeUse,
      filesChanged: this.filesChanged,
      artifacts: this.artifacts,
      diff: this.diff,
      // With the gateway, the model's time is its calls' own; else the agent's turns as a whole.
      modelMs: this.gateway === null ? this.modelMs : callsMs(this.gateway.calls),
      // Everything that is neither the agent's turn nor the verdict: set-up and snapshots (the teardown follows the outcome).
      sandboxMs: Math.max(0, totalMs - this.modelMs - this.verifyMs),
      sandboxId: this.sandbox.id,
      // Metered by the gateway when the agent reached its model through it: what the agent prints is not taken for it.
      usage: this.gateway === null ? this.usage : callsUsage(this.gateway.calls),
      agentModel: this.gateway === null ? null : this.agentModel(this.gateway),
      harnessVersion,
      authFailed: this.authFailed,
      refusedProviderKey: this.gateway?.keyRefused === true ? this.gateway.keyConnector : null,
      conversation: this.ending,
      userModel: this.userModel,
    };
  }
}

/** Environment values cannot hold NUL bytes (spawn refuses them); the prompt on stdin keeps them. */
export function envValue(value: string): string {
  return value.includes('\0') ? value.replace(/\0/g, '') : value;
}

function firstWords(command: string): string {
  return command.length <= 40 ? command : `${command.slice(0, 40)}…`;
}

/** The trajectory with the model calls in it, each before the first entry that began after it. */
function withModelCalls(trajectory: readonly TrajectoryEntry[], calls: readonly TrajectoryModelCall[]): TrajectoryEntry[] {
  if (calls.length === 0) return [...trajectory];
  const merged: TrajectoryEntry[] = [];
  const pending = [...calls].sort((a, b) => a.startedAtMillis - b.startedAtMillis);
  for (const entry of trajectory) {
    const at = entryTime(entry);
    while (at !== null && pending.length > 0 && pending[0].startedAtMillis < at) merged.push(...pending.splice(0, 1));
    merged.push(entry);
  }
  return [...merged, ...pending];
}

/** When an entry began, where it says: a command's start, a message's time. */
function entryTime(entry: TrajectoryEntry): number | null {
  if (entry._tag === 'command' || entry._tag === 'model-call') return entry.startedAtMillis;
  if (entry._tag === 'message') return entry.at;
  return null;
}

function callsMs(calls: readonly TrajectoryModelCall[]): number {
  return calls.reduce((total, call) => total + (call.finishedAtMillis - call.startedAtMillis), 0);
}

/** The trial's usage: its calls' tokens added up (no call, no tokens: zero, not unknown). */
function callsUsage(calls: readonly TrajectoryModelCall[]): TrialUsage {
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 0, costUsd: null };
  for (const call of calls) {
    usage.inputTokens += call.inputTokens;
    usage.outputTokens += call.outputTokens;
    usage.cacheReadTokens += call.cacheReadTokens;
    usage.cacheWriteTokens += call.cacheWriteTokens;
  }
  usage.totalTokens = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  return usage;
}

/** What one call cost at its model's configured price (cached input at the input price: the table has no cache prices); null when unpriced. */
export function callPrice(prices: Record<string, ModelPrice>, call: TrajectoryModelCall): number | null {
  const input = call.inputTokens + call.cacheReadTokens + call.cacheWriteTokens;
  return priceOf(prices, call.model, { inputTokens: input, outputTokens: call.outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 0 });
}

/** The agent's calls summed for its cost component: each priced at its model's configured price. */
function agentModelUse(gateway: GatewayGrant, prices: Record<string, ModelPrice>): AgentModelUse {
  const usage = callsUsage(gateway.calls);
  let usd: number | null = 0;
  for (const call of gateway.calls) {
    const priced = callPrice(prices, call);
    usd = usd === null || priced === null ? null : usd + priced;
  }
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, totalTokens } = usage;
  const models = [...new Set(gateway.calls.map((call) => call.model))];
  return {
    provider: gateway.provider.name,
    models,
    calls: gateway.calls.length,
    inputTokens,
    outputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    totalTokens,
    usd,
  };
}

/** The forwarder as shipped beside the gateway (copied into the build). */
const GATEWAY_FORWARDER_SOURCE = path.join(__dirname, 'gateway', 'forwarder.py');

/**
 * The command, after the forwarder that serves the gateway on the sandbox's own loopback: it
 * returns once it listens, so the command finds the gateway's URL answering. A forwarder that
 * cannot start fails the command before it runs, saying so.
 */
function forwardingFirst(command: string, port: number): string {
  // The sandbox's own python3, found on the trial's PATH among the system paths it sees.
  return `python3 ${GATEWAY_FORWARDER} ${port} ${GATEWAY_SOCKET} || { echo "assay: the model gateway could not be served in the sandbox (python3 is needed)" >&2; exit 125; }\n${command}`;
}
