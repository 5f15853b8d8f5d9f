import type { TrialSpec } from '../trial-runner.port';
import { ConversationUser, ScriptedConversationUser } from './conversation-user';

/** The user of the trial's case: none (one turn), its scripted replies, or a simulated user. */
export function conversationUser(spec: TrialSpec): ConversationUser | null {
  if (spec.user === null) return null;
  if (spec.user.kind === 'scripted') return new ScriptedConversationUser(spec.user);
  throw new Error('simulated users are not wired yet');
}
