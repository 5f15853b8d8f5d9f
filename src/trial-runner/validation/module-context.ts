import type { TrialSession } from '../trial-session';
import type { ModuleContextData } from './module-protocol';

/**
 * What a validator sees of the trial: the rendered opening prompt, the conversation, the agent's
 * last message, the trajectory and the case's variables. A trial whose runner kept no
 * conversation (a single turn) shows the opening prompt and the agent's answer: its final
 * message, else the tail of its turn's output.
 */
export function validatorContext(session: TrialSession): ModuleContextData {
  const prompt = session.spec.prompt;
  const finalMessage = session.finalMessage ?? agentOutput(session);
  const conversation =
    session.conversation.length > 0
      ? session.conversation.map((message) => ({ ...message }))
      : [{ role: 'user' as const, text: prompt }, ...(finalMessage === null ? [] : [{ role: 'agent' as const, text: finalMessage }])];
  return {
    prompt,
    conversation,
    finalMessage,
    trajectory: structuredClone(session.trajectory),
    variables: { ...session.spec.variables, ...session.preparedVariables },
  };
}

/** The output of the last command run so far (the agent's turn, when read before verify). */
function agentOutput(session: TrialSession): string | null {
  for (let index = session.trajectory.length - 1; index >= 0; index -= 1) {
    const entry = session.trajectory[index];
    if (entry._tag === 'command') return entry.output;
  }
  return null;
}
