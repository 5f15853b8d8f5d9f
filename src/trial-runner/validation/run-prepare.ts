import type { TrialSession } from '../trial-session';
import { TrialVoid } from '../trial-verdict';
import { runModule } from './module-process';
import { transpileModule } from './transpile';

/** The most a prepare may return, serialized. */
export const MAX_PREPARE_RESULT_CHARS = 16_000;

/**
 * Runs the case's prepare in the sandbox, after the workspace is set up and before the first
 * agent turn, and records it in the trajectory. Answers its string members as the `prepare.`
 * variables of the opening prompt. A prepare that cannot compile, throws, times out or answers
 * something else than a small JSON object voids the trial: the agent never ran.
 */
export async function runPrepare(session: TrialSession): Promise<Record<string, string>> {
  const prepare = session.spec.prepare;
  if (prepare === null) return {};
  const failed = (reason: string) => new TrialVoid(`prepare "${prepare.name}" ${reason}`, ['prepare']);
  const compiled = await transpileModule(prepare.source);
  if ('failure' in compiled) throw failed(compiled.failure);
  const lastLogs: string[] = [];
  const run = await runModule(session, {
    mode: 'prepare',
    name: prepare.name,
    code: compiled.code,
    context: { prompt: '', conversation: [], finalMessage: null, trajectory: [], variables: { ...session.spec.variables } },
    timeoutMs: session.settings.validatorTimeoutMs,
    onLog: (_level, text) => {
      lastLogs.push(text);
      if (lastLogs.length > 3) lastLogs.shift();
    },
    onJudge: () => Promise.reject(new Error('prepare cannot call judge')),
  });
  if (run.end.kind === 'error') throw failed(run.end.failure);
  const result = preparedResult(run.end.value);
  if (typeof result === 'string') throw failed(result);
  session.trajectory.push({ _tag: 'prepare', name: prepare.name, durationMs: run.durationMs, result });
  const variables: Record<string, string> = {};
  for (const [key, value] of Object.entries(result ?? {})) if (typeof value === 'string') variables[`prepare.${key}`] = value;
  return variables;
}

/** The answer as a JSON object (null for none), or why it is not one. */
function preparedResult(value: unknown): Record<string, unknown> | null | string {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    return `returned ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}; return a JSON object or nothing`;
  const size = JSON.stringify(value).length;
  if (size > MAX_PREPARE_RESULT_CHARS) return `returned ${size} characters of JSON; at most ${MAX_PREPARE_RESULT_CHARS} are allowed`;
  return value as Record<string, unknown>;
}
