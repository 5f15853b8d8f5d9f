import { DEFAULT_JUDGE_CHOICES, DEFAULT_JUDGE_THRESHOLD } from '#shared/eval-definitions';
import type { JudgeAnswer, JudgeRequest, ModuleContextData } from './module-protocol';
import type { Judgment } from '../contract';

export type { JudgeModelUse } from '../contract';

/** A judge call as the server makes it: the rubric, its choices, and what the judge reads. */
export interface JudgeCall {
  name: string;
  prompt: string;
  choices: Record<string, number>;
  threshold: number;
  /** The form's model; null for the configured judge's default. */
  model: string | null;
  files: JudgeRequest['files'];
  conversation: ModuleContextData['conversation'];
  finalMessage: string | null;
}

/** Why a judge call failed: no key for its provider, the provider failed, or the answer was unusable. */
export type JudgeErrorCause = 'key' | 'provider' | 'answer';

/** A judge's failure (its provider failed, or it answered outside the choices), with what it recorded. */
export class JudgeError extends Error {
  constructor(
    message: string,
    readonly judgment: Judgment | null,
    readonly failedOn: JudgeErrorCause = 'answer',
  ) {
    super(message);
    this.name = 'JudgeError';
  }
}

/** Asks the configured judge model; rejects with a JudgeError. */
export interface JudgeService {
  judge(call: JudgeCall, signal?: AbortSignal): Promise<{ answer: JudgeAnswer; judgment: Judgment }>;
}

/** Where no judge is configured, every judge call is an error that says what to configure. */
export const unconfiguredJudge: JudgeService = {
  judge: () => Promise.reject(new JudgeError('this server has no judge model: set judges ({provider, model}) in ASSAY_CONFIG', null, 'key')),
};

/**
 * A `ctx.judge(...)` request as a module sent it, checked like the judge form (the module is
 * the case's code: anything may arrive). Answers the call, or what is wrong with the request.
 */
export function judgeCall(request: JudgeRequest, fallbackName: string, context: ModuleContextData): JudgeCall | { problem: string } {
  const { prompt, choices, threshold, model, name } = request;
  if (typeof prompt !== 'string' || prompt.length < 1 || prompt.length > 8000) return { problem: 'judge needs a prompt of 1 to 8000 characters' };
  if (model !== undefined && model !== null && (typeof model !== 'string' || model.length < 1 || model.length > 200)) {
    return { problem: 'judge model must be a string of 1 to 200 characters' };
  }
  if (threshold !== undefined && (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)))
    return { problem: 'judge threshold must be a number from 0 to 1' };
  const checkedChoices = choices === undefined ? DEFAULT_JUDGE_CHOICES : scoreMap(choices);
  if (checkedChoices === null) return { problem: 'judge choices must map 1 to 20 labels (1 to 100 characters) to scores from 0 to 1' };
  return {
    name: typeof name === 'string' && name !== '' ? name.slice(0, 200) : fallbackName,
    prompt,
    choices: checkedChoices,
    threshold: typeof threshold === 'number' ? threshold : DEFAULT_JUDGE_THRESHOLD,
    model: typeof model === 'string' ? model : null,
    files: request.files,
    conversation: context.conversation,
    finalMessage: context.finalMessage,
  };
}

function scoreMap(value: unknown): Record<string, number> | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length < 1 || entries.length > 20) return null;
  const valid = entries.every(([label, score]) => label.length >= 1 && label.length <= 100 && typeof score === 'number' && score >= 0 && score <= 1);
  return valid ? (Object.fromEntries(entries) as Record<string, number>) : null;
}
