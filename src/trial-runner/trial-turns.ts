import type { GatewayGrant } from './gateway/model-gateway';
import { isReservedVariable } from '#shared/reserved-variables';
import type { HarnessPlan } from './harness/harness-driver';
import { readFinalMessage, readUsage } from './harness/usage';
import type { ReportedToolCall } from './harness/agents/agent-driver';
import { capUtf8, cutMarker } from './output/captured-output';
import type { TrialUsage } from './contract';
import { envValue, StepResult, TrialSession } from './trial-session';
import { scored, TrialFailed, TrialVoid, Verdict } from './trial-verdict';
import { CONVERSATION_FILE } from './conversation/conversation-file';
import { storeArtifacts } from './workspace/artifacts';
import { changedPaths, KeptContents, Snapshot, snapshotWorkspace } from './workspace/snapshot';
import { workspaceDiff } from './workspace/diff';

/** How much of the end of a long harness output is kept to read usage from (final totals). */
const USAGE_TAIL_BYTES = 1024 * 1024;
/** Beyond this an environment variable can no longer be passed to exec (E2BIG); stdin still has the prompt. */
const MAX_ENV_PROMPT_BYTES = 128 * 1024 - 1;

/**
 * The environment of the harness and of verify: the base, the harness driver's, the
 * organization's, the profile's, then the prompt and the model, which nothing overrides.
 */
export function agentEnv(session: TrialSession, plan: HarnessPlan): Record<string, string> {
  const env: Record<string, string> = { ...session.baseEnv() };
  for (const layer of [plan.env, session.spec.env, session.spec.profile?.env ?? {}]) {
    for (const [name, value] of Object.entries(layer)) {
      if (refusedHere(session, name, layer === session.spec.env)) continue;
      // A harness that reaches its model through the gateway gets its connector's values there, never in the sandbox.
      if (plan.provider !== null && layer === session.spec.env && name.startsWith(HARNESS_CONNECTOR_PREFIX)) continue;
      env[name] = envValue(layer === plan.env ? gatewayValues(value, session.gateway) : value);
    }
  }
  // The command harness reaches its profile's provider through the gateway under the service's own names.
  if (session.gateway !== null && session.spec.harness === 'command') {
    env.ASSAY_MODEL_BASE_URL = session.gateway.url;
    env.ASSAY_MODEL_API_KEY = session.gateway.token;
  }
  const prompt = envValue(session.spec.prompt);
  if (Buffer.byteLength(prompt) <= MAX_ENV_PROMPT_BYTES) env.ASSAY_PROMPT = prompt;
  env.ASSAY_MODEL = envValue(session.spec.model);
  return env;
}

/** The harness connector's values in a trial's resolved environment (connector-values.ts names them). */
const HARNESS_CONNECTOR_PREFIX = 'ASSAY_HARNESS_';
export const HARNESS_CONNECTOR_KEY = 'ASSAY_HARNESS_API_KEY';

/**
 * A reserved name (PATH, LD_PRELOAD…) is refused where it is set; one that got in before the
 * rule (a batch started earlier) is skipped with a warning rather than change how the sandbox
 * starts. The connector values of the resolved environment are the service's own `ASSAY_` names.
 */
function refusedHere(session: TrialSession, name: string, resolved: boolean): boolean {
  if (!isReservedVariable(name) || (resolved && name.startsWith('ASSAY_'))) return false;
  session.settings.logger?.warn('reserved environment variable skipped', { trialId: session.spec.trialId, name });
  return true;
}

/** What one agent turn did: the command's result and the agent's message as the user sees it. */
export interface AgentTurn {
  result: StepResult;
  /** The driver's final answer when its usage format reports one, else the tail of the output; redacted. */
  message: string;
}

/** The part of an agent's output that is its message to the user when its driver reports no final answer. */
const MESSAGE_TAIL_CHARS = 8000;

/**
 * One agent turn: the harness runs with the turn's message on stdin and in ASSAY_PROMPT, bounded
 * by what is left of the case's timeoutMs. Answers the turn for the conversation to go on; the
 * agent's own doing that ends the trial (a certain limit, refused credentials) throws.
 */
export async function runAgentCommand(
  session: TrialSession,
  plan: HarnessPlan,
  env: Record<string, string>,
  turn: { number: number; message: string; budgetMs: number; conversationFile: string },
): Promise<AgentTurn> {
  const turnEnv: Record<string, string> = { ...env, ASSAY_TURN: String(turn.number), ASSAY_CONVERSATION: turn.conversationFile };
  const prompt = envValue(turn.message);
  if (Buffer.byteLength(prompt) <= MAX_ENV_PROMPT_BYTES) turnEnv.ASSAY_PROMPT = prompt;
  else delete turnEnv.ASSAY_PROMPT;
  const command = plan.commandFor(turn.number, turn.message);
  if (session.gateway !== null) session.gateway.turn = turn.number;
  const result = await session.step(command, { env: turnEnv, stdin: turn.message, timeoutMs: turn.budgetMs, tailBytes: USAGE_TAIL_BYTES, agentTurn: true });
  session.modelMs += result.finishedAtMillis - result.startedAtMillis;
  session.exitCode = result.timedOut ? null : result.exitCode;
  const agentReport = plan.agent === null ? null : plan.agent.driver.read(result.keptText);
  if (plan.agent !== null && agentReport !== null) {
    plan.agent.sessionId ??= agentReport.sessionId;
    recordToolCalls(session, turn.number, agentReport.toolCalls, result.finishedAtMillis);
  }
  session.usage = addUsage(session.usage, agentReport === null ? readUsage(plan.usage, result.keptText) : agentReport.usage);
  const reported = agentReport === null ? readFinalMessage(plan.usage, result.keptText) : agentReport.finalMessage;
  const message = reported === null ? result.output.trim().slice(-MESSAGE_TAIL_CHARS) : session.redactor.redact(reported);
  if (result.timedOut) return { result, message };
  // An agent that says its turn failed (some exit 0 after a failed model call) failed it; the gateway's view of the provider may void it.
  if (agentReport?.error != null) throw new TrialFailed(`${plan.agent?.driver.name} reported an error in turn ${turn.number}: ${agentReport.error}`);
  // The agent's own doing: failed with the limit named. A limit read from its output (it may
  // have recovered, or printed the words for a reason of its own) names the failure only if verify fails.
  if (result.limit?.certain) throw new TrialFailed(`the agent hit a limit: ${result.limit.reason}`);
  if (result.limit !== null) session.agentLimit = `the agent hit a limit: ${result.limit.reason}`;
  if (result.exitCode !== 0 && plan.authFailure?.test(result.keptText)) {
    session.authFailed = true;
    throw new TrialVoid(`${session.spec.harness} could not authenticate: check the credentials of its connector`, ['credentials']);
  }
  return { result, message };
}

/**
 * The tool calls the agent's output reported, after its turn's command: each as a `tool-call`
 * entry, and a shell call whose exit code it reported also as a `command` entry. Inputs and
 * outputs are redacted and capped like a command's output.
 */
function recordToolCalls(session: TrialSession, turn: number, calls: readonly ReportedToolCall[], at: number): void {
  const cap = session.settings.outputCapBytes;
  const shown = (value: unknown) => capped(session.redactor.redact(typeof value === 'string' ? value : JSON.stringify(value ?? null)), cap);
  for (const call of calls) {
    const output = call.output === null || call.output === undefined ? null : shown(call.output).text;
    session.trajectory.push({ _tag: 'tool-call', turn, tool: capped(call.tool, 200).text, input: shown(call.input).text, output, at });
    if (call.command === null || call.command.exitCode === null) continue;
    const text = shown(call.output ?? '');
    session.trajectory.push({
      _tag: 'command',
      command: shown(call.command.command).text || '(empty)',
      exitCode: Math.min(255, Math.max(0, call.command.exitCode)),
      startedAtMillis: at,
      finishedAtMillis: at,
      output: text.text,
      outputTruncated: text.truncated,
    });
  }
}

/** At most `capBytes` of the text, with the cut marked. */
function capped(text: string, capBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text, 'utf8') <= capBytes) return { text, truncated: false };
  const marker = cutMarker(Buffer.byteLength(text, 'utf8') - capBytes);
  return { text: `${capUtf8(text, Math.max(0, capBytes - Buffer.byteLength(marker)))}${marker}`, truncated: true };
}

/**
 * Records what the agent changed over the whole conversation (not the set-up's, not verify's):
 * filesChanged and the artifacts. The conversation file is the service's, never a change.
 */
export async function recordChanges(session: TrialSession, before: Snapshot, kept: KeptContents): Promise<void> {
  const { workspace } = session.directory;
  const after = await snapshotWorkspace(workspace, before, SERVICE_FILES);
  const notMade = (error: unknown) => {
    session.settings.logger?.warn('the trial diff was not made', { trialId: session.spec.trialId, reason: String(error) });
    return null;
  };
  // Its copies made, the patch is made while verify runs; the outcome waits for it (settleDiff).
  const pending = await workspaceDiff(workspace, before, after, kept, session.redactor).catch(notMade);
  session.diffMaking = pending === null ? null : pending.diff.catch(notMade);
  // A file named after a secret must not carry it into the events.
  session.filesChanged = changedPaths(before, after).map((relative) => session.redactor.redact(relative));
  const { dataDir, artifactSealer } = session.settings;
  const store = { dataDir, organization: session.spec.organization, redactor: session.redactor, sealer: artifactSealer ?? null };
  session.artifacts = await storeArtifacts(store, workspace, before, after);
}

export const SERVICE_FILES: ReadonlySet<string> = new Set([CONVERSATION_FILE]);

/** Token counts added turn by turn; null while no turn reported any. */
function addUsage(total: TrialUsage | null, turn: TrialUsage | null): TrialUsage | null {
  if (turn === null) return total;
  if (total === null) return turn;
  const add = (a: number | null, b: number | null) => (a === null || b === null ? null : a + b);
  return {
    inputTokens: total.inputTokens + turn.inputTokens,
    outputTokens: total.outputTokens + turn.outputTokens,
    cacheReadTokens: total.cacheReadTokens + turn.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + turn.cacheWriteTokens,
    totalTokens: total.totalTokens + turn.totalTokens,
    costUsd: add(total.costUsd, turn.costUsd),
  };
}

/**
 * Verify decides: exit 0 passes, any other code fails, except 126 and 127, the shell's own
 * "cannot execute" and "not found": the check never ran, so the trial cannot be scored.
 */
export async function verifyWorkspace(session: TrialSession, env: Record<string, string>): Promise<Verdict> {
  const command = session.spec.verify;
  // decideTrial (validation/verdict.ts) runs verify only when the case gives it.
  if (command === null || command.trim() === '') throw new TrialVoid('the case has no verify command', ['verify']);
  const timeoutMs = session.settings.verifyTimeoutMs;
  const result = await session.step(command, { env, timeoutMs });
  session.verifyMs = result.finishedAtMillis - result.startedAtMillis;
  session.verifySteps.push({ command: session.redactor.redact(command), exitCode: result.status });
  // `timed` stays false: it reports the agent running out of time, and verify is not the agent.
  if (result.timedOut) throw new TrialVoid(`verify timed out after ${timeoutMs} ms`, ['verify']);
  if (result.limit?.certain) throw new TrialVoid(`verify hit a limit: ${result.limit.reason}`, ['verify']);
  if (result.status === 126 || result.status === 127) {
    const reason = result.status === 127 ? 'command not found' : 'cannot execute';
    const detail = result.output.trim().split('\n').pop() ?? '';
    throw new TrialVoid(`the verify command could not run (exit ${result.status}, ${reason})${detail ? `: ${detail}` : ''}`, ['verify']);
  }
  if (result.status !== 0 && session.agentLimit !== null) return { ...scored(false), failure: session.agentLimit };
  return scored(result.status === 0);
}

/** A harness's environment value with its trial's gateway filled in: {{gateway.url}} (an origin) and {{gateway.token}}. */
function gatewayValues(value: string, gateway: GatewayGrant | null): string {
  if (gateway === null) return value;
  return value.replace(/\{\{\s*gateway\.(url|token)\s*\}\}/g, (_match, name: 'url' | 'token') => gateway[name]);
}
