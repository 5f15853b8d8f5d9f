import type { ScriptedUser } from '#shared/eval-definitions';
import type { UserModelUse } from '../contract';

/** A message of the conversation as the user, the agent's next turn and validators see it. */
export interface ConversationMessage {
  role: 'user' | 'agent';
  text: string;
}

/** What the user does after an agent turn: says something, or ends the conversation. */
export type UserAnswer = { kind: 'reply'; text: string } | { kind: 'done' };

export type { UserModelUse } from '../contract';

/** The other side of a conversation: a scripted list of replies or a simulated user. */
export interface ConversationUser {
  /** True when the user has nothing left to say after the agent's turn `turn` (scripted replies ran out). */
  exhaustedAfter(turn: number): boolean;
  /** The user's answer to the conversation so far (it ends with the agent's turn `turn`). */
  answer(conversation: readonly ConversationMessage[], turn: number, signal?: AbortSignal): Promise<UserAnswer>;
  /** The model the user called and what it cost; null for a scripted user. */
  modelUse(): UserModelUse | null;
}

/** Replies sent in order, one per turn; the conversation ends when they run out. */
export class ScriptedConversationUser implements ConversationUser {
  constructor(private readonly user: ScriptedUser) {}

  exhaustedAfter(turn: number): boolean {
    return turn > this.user.replies.length;
  }

  answer(_conversation: readonly ConversationMessage[], turn: number): Promise<UserAnswer> {
    const text = this.user.replies.at(turn - 1);
    return Promise.resolve(text === undefined ? { kind: 'done' } : { kind: 'reply', text });
  }

  modelUse(): null {
    return null;
  }
}
