import type { ModuleContextData } from '#trial-runner';
import type { TrialView } from '../trial-view';

/**
 * What a judge reads of a finished trial, from what its events stored (already redacted): the
 * conversation's messages and the agent's last one; a trial that kept no conversation (a single
 * turn) shows the opening prompt and its last command's output, as the trial's own judge saw it.
 */
export function storedConversation(trial: TrialView, prompt: string): Pick<ModuleContextData, 'conversation' | 'finalMessage'> {
  const messages = trial.trajectory.flatMap((entry) => (entry._tag === 'message' ? [{ role: entry.role, text: entry.text }] : []));
  const lastAgent = messages.filter((message) => message.role === 'agent').at(-1)?.text ?? null;
  const lastOutput = trial.trajectory.flatMap((entry) => (entry._tag === 'command' ? [entry.output] : [])).at(-1) ?? null;
  const finalMessage = lastAgent ?? lastOutput;
  if (messages.length > 0) return { conversation: messages, finalMessage };
  return { conversation: [{ role: 'user', text: prompt }, ...(finalMessage === null ? [] : [{ role: 'agent' as const, text: finalMessage }])], finalMessage };
}
