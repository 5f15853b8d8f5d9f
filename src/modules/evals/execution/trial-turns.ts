import { isReservedVariable } from '#shared/reserved-variables';
import type { HarnessPlan } from './harness/harness-driver';
import { readUsage } from './harness/usage';
import { envValue, TrialSession } from './trial-session';
import { ranOutOfTime, scored, TrialFailed, TrialVoid, Verdict } from './trial-verdict';
import { storeArtifacts } from './workspace/artifacts';
import { changedPaths, snapshotWorkspace } from './workspace/snapshot';

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
      env[name] = envValue(value);
    }
  }
  const prompt = envValue(session.spec.prompt);
  if (Buffer.byteLength(prompt) <= MAX_ENV_PROMPT_BYTES) env.ASSAY_PROMPT = prompt;
  env.ASSAY_MODEL = envValue(session.spec.model);
  return env;
}

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

/**
 * The agent's turn: the harness runs with the prompt on stdin, bounded by the case's timeoutMs.
 * The workspace is snapshotted around it, so filesChanged and artifacts are the agent's doing
 * alone (not the set-up's, not verify's). Answers the verdict when the turn alone decides the
 * trial (the agent ran out of time, once its changes are recorded), null for verify to decide.
 */
export async function runAgentTurn(session: TrialSession, plan: HarnessPlan, env: Record<string, string>): Promise<Verdict | null> {
  const { workspace } = session.directory;
  const before = await snapshotWorkspace(workspace);
  const result = await session.step(plan.run, { env, stdin: session.spec.prompt, timeoutMs: session.spec.timeoutMs, tailBytes: USAGE_TAIL_BYTES });
  session.modelMs = result.finishedAtMillis - result.startedAtMillis;
  session.exitCode = result.timedOut ? null : result.exitCode;
  session.usage = readUsage(plan.usage, result.keptText);
  const after = await snapshotWorkspace(workspace, before);
  // A file named after a secret must not carry it into the events.
  session.filesChanged = changedPaths(before, after).map((relative) => session.redactor.redact(relative));
  const { dataDir, artifactSealer } = session.settings;
  const store = { dataDir, organization: session.spec.organization, redactor: session.redactor, sealer: artifactSealer ?? null };
  session.artifacts = await storeArtifacts(store, workspace, before, after);
  if (result.timedOut) return ranOutOfTime(session.spec.timeoutMs);
  // The agent's own doing: failed with the limit named. A limit read from its output (it may
  // have recovered, or printed the words for a reason of its own) names the failure only if verify fails.
  if (result.limit?.certain) throw new TrialFailed(`the agent hit a limit: ${result.limit.reason}`);
  if (result.limit !== null) session.agentLimit = `the agent hit a limit: ${result.limit.reason}`;
  if (result.exitCode !== 0 && plan.authFailure?.test(result.keptText)) {
    session.authFailed = true;
    throw new TrialVoid(`${session.spec.harness} could not authenticate: check the credentials of its connector`, ['credentials']);
  }
  return null;
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
