import type { HarnessPlan } from '../harness/harness-driver';
import type { ConversationEndReason } from '../contract';
import type { TrialSession } from '../trial-session';
import { recordChanges, runAgentCommand, SERVICE_FILES } from '../trial-turns';
import { ranOutOfTime, TrialVoid, Verdict } from '../trial-verdict';
import { snapshotWorkspace } from '../workspace/snapshot';
import { keptContents } from '../workspace/diff';
import { writeConversationFile } from './conversation-file';
import type { ConversationUser } from './conversation-user';

/** The user's model failed to answer: the conversation cannot go on and the trial is void. */
export class UserModelFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserModelFailed';
  }
}

/** Recorded texts are capped (the opening prompt can be long; the run's setup keeps it whole). */
const MESSAGE_CAP_CHARS = 16_000;

/**
 * The conversation: the opening prompt, then after each agent turn the user's answer, until the
 * user is done or out of replies, `maxTurns` user turns were sent, or the agent ran out of its
 * time (`timeoutMs` across all turns). Answers the verdict when the conversation alone decides
 * the trial (the agent ran out of time), null for verify to decide. The workspace is snapshotted
 * around the whole conversation, so filesChanged and artifacts are the agent's doing alone.
 */
export async function holdConversation(
  session: TrialSession,
  plan: HarnessPlan,
  env: Record<string, string>,
  user: ConversationUser | null,
): Promise<Verdict | null> {
  const { spec, directory } = session;
  const kept = keptContents();
  const before = await snapshotWorkspace(directory.workspace, new Map(), SERVICE_FILES, kept);
  const messages: Array<{ role: 'user' | 'agent'; turn: number; text: string }> = [];
  const say = (role: 'user' | 'agent', turn: number, text: string) => {
    const shown = session.redactor.redact(text);
    messages.push({ role, turn, text: shown });
    session.recordMessage(role, turn, cap(shown));
  };
  let turn = 1;
  let message = spec.prompt;
  let ending: { reason: ConversationEndReason; verdict: Verdict | null } | null = null;
  try {
    while (ending === null) {
      say('user', turn, message);
      const conversationFile = await writeConversationFile(directory.workspace, messages, session.sandbox.user);
      const budgetMs = spec.timeoutMs - session.modelMs;
      if (budgetMs <= 0) {
        ending = { reason: 'timeout', verdict: ranOutOfTime(spec.timeoutMs) };
        break;
      }
      const agent = await runAgentCommand(session, plan, env, { number: turn, message, budgetMs, conversationFile }).catch((error: unknown) => {
        // A turn whose command never started was never delivered: its message is not part of the record.
        if (session.trajectory.at(-1)?._tag === 'message') session.retractMessage();
        throw error;
      });
      say('agent', turn, agent.message);
      if (agent.result.timedOut) {
        ending = { reason: 'timeout', verdict: ranOutOfTime(spec.timeoutMs) };
        break;
      }
      const next = await nextUserTurn(session, user, turn, messages, plan.agent?.driver.resumes !== false);
      if ('reason' in next) ending = { reason: next.reason, verdict: null };
      else {
        turn += 1;
        message = next.text;
      }
    }
  } catch (error) {
    if (error instanceof UserModelFailed) {
      session.endConversation(turn, 'failed');
      throw new TrialVoid(error.message, ['user']);
    }
    throw error;
  } finally {
    session.userModel = user?.modelUse() ?? null;
    await recordChanges(session, before, kept);
  }
  session.endConversation(turn, ending.reason);
  return ending.verdict;
}

/** What follows the agent's turn `turn`: the user's next message, or why the conversation ends. */
async function nextUserTurn(
  session: TrialSession,
  user: ConversationUser | null,
  turn: number,
  messages: ReadonlyArray<{ role: 'user' | 'agent'; text: string }>,
  agentResumes: boolean,
): Promise<{ text: string } | { reason: ConversationEndReason }> {
  if (user === null) return { reason: 'single-turn' };
  if (user.exhaustedAfter(turn)) return { reason: 'replies-exhausted' };
  if (turn >= session.spec.maxTurns) return { reason: 'max-turns' };
  // An agent that cannot resume its session without a terminal (cline) ends the conversation here.
  if (!agentResumes) return { reason: 'agent-cannot-continue' };
  const answer = await user.answer(messages, turn, session.signal);
  if (answer.kind === 'done') return { reason: user.modelUse() === null ? 'replies-exhausted' : 'user-done' };
  return { text: answer.text };
}

function cap(text: string): string {
  return text.length <= MESSAGE_CAP_CHARS ? text : `${text.slice(0, MESSAGE_CAP_CHARS)}[… ${text.length - MESSAGE_CAP_CHARS} characters cut …]`;
}
