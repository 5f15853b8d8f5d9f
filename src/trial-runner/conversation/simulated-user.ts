import type { SimulatedUser } from '#shared/eval-definitions';
import { callModel, ModelUsage, priceOf, ProviderCallError } from '../providers/model-client';
import type { ModelPrice, ProviderDefinition } from '../providers/provider-config';
import { UserModelFailed } from './conversation';
import type { ConversationMessage, ConversationUser, UserAnswer, UserModelUse } from './conversation-user';

/** What the simulated user answers when its goal is met or cannot be: the conversation ends there. */
export const DONE_MARKER = '<<DONE>>';

/** Longest answer of the simulated user the agent is sent. */
const MAX_ANSWER_CHARS = 8000;
const MAX_ANSWER_TOKENS = 1024;

/**
 * The instructions the user model plays by: its goal and persona from the case, the opening
 * prompt it "sent", and how to end. The opening prompt is told rather than replayed as a turn of
 * its own, so the messages it reads start with the agent's answer, as every protocol accepts.
 */
export function simulatedUserInstructions(user: SimulatedUser, opening: string): string {
  return [
    'You are the user in a conversation with an AI coding agent. Stay in that role: write only what this user would write next, as one message, never mention that you are simulated.',
    `Your goal:\n${user.goal}`,
    `Who you are and how you behave:\n${user.prompt}`,
    `You opened the conversation with this message:\n${opening}`,
    `Each message you receive is the agent's latest turn. When your goal is met, or clearly cannot be met, answer exactly ${DONE_MARKER} and nothing else.`,
  ].join('\n\n');
}

export interface SimulatedUserModel {
  provider: ProviderDefinition;
  model: string;
  apiKey: string | null;
  prices: Record<string, ModelPrice>;
}

/** A user played by a model through the configured provider, until it says it is done. */
export class SimulatedConversationUser implements ConversationUser {
  private readonly use: UserModelUse;

  constructor(
    private readonly user: SimulatedUser,
    private readonly target: SimulatedUserModel,
  ) {
    const { provider, model } = target;
    this.use = { provider: provider.name, model, calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 0, usd: 0 };
  }

  exhaustedAfter(): boolean {
    return false;
  }

  async answer(conversation: readonly ConversationMessage[], _turn: number, signal?: AbortSignal): Promise<UserAnswer> {
    const [opening, ...rest] = conversation;
    // The user model speaks as the assistant of its own conversation: the agent's turns are what it reads.
    const messages = rest.map((message) => ({
      role: message.role === 'agent' ? ('user' as const) : ('assistant' as const),
      content: message.text === '' ? '(the agent said nothing)' : message.text,
    }));
    const { provider, model, apiKey } = this.target;
    let text: string;
    try {
      const answer = await callModel({
        provider,
        apiKey,
        model,
        system: simulatedUserInstructions(this.user, opening.text),
        messages,
        signal,
        maxOutputTokens: MAX_ANSWER_TOKENS,
      });
      this.count(answer.usage);
      text = answer.text.trim();
    } catch (error) {
      if (error instanceof ProviderCallError) throw new UserModelFailed(`the simulated user could not answer: ${error.message}`);
      throw error;
    }
    if (text.includes(DONE_MARKER)) return { kind: 'done' };
    if (text === '') throw new UserModelFailed(`the simulated user could not answer: provider "${provider.name}" answered an empty message`);
    return { kind: 'reply', text: text.slice(0, MAX_ANSWER_CHARS) };
  }

  modelUse(): UserModelUse {
    return { ...this.use };
  }

  private count(usage: ModelUsage): void {
    const use = this.use;
    use.calls += 1;
    use.inputTokens += usage.inputTokens;
    use.outputTokens += usage.outputTokens;
    use.cacheReadTokens += usage.cacheReadTokens;
    use.cacheWriteTokens += usage.cacheWriteTokens;
    use.totalTokens += usage.totalTokens;
    const usd = priceOf(this.target.prices, use.model, usage);
    use.usd = use.usd === null || usd === null ? null : use.usd + usd;
  }
}
