import { z } from 'zod';
import { callModelForObject, priceOf, providerIntegration, ProviderCallError, resolveProviderKey } from '../providers/model-client';
import type { ModelUsage } from '../providers/model-client';
import type { TrialSession } from '../trial-session';
import { JudgeCall, JudgeError, JudgeErrorCause, JudgeModelUse, JudgeService, unconfiguredJudge } from './judge';
import type { ProviderSettings } from '../providers/provider-config';
import type { Judgment, JudgmentUsage } from './validation-record';

const MAX_JUDGE_OUTPUT_TOKENS = 1024;
const MAX_REASON_CHARS = 4000;

/**
 * The trial's judge: the model of `judges` in ASSAY_CONFIG (a form's `model` overrides it) on its
 * provider, with the provider's key (the server variable, else the organization's connector). It
 * answers in the shape `{choice, reason}` with `choice` one of the labels (structured output, never
 * free text); an answer outside them fails the call.
 */
export function modelJudge(session: TrialSession): JudgeService {
  return configuredJudge(session.settings.config, session.spec.providerKeys, (provider, model, usage) => record(session, provider, model, usage));
}

/** What a judge needs of the configuration: the providers, the judges' provider and model, the prices. */
export type JudgeSettings = Pick<ProviderSettings, 'providers' | 'judges' | 'prices'>;

/**
 * The judge over the configuration and the organization's provider keys, outside a trial too
 * (a rescore judges stored conversations); `onUse` hears of each answered call's usage.
 */
export function configuredJudge(
  config: JudgeSettings,
  providerKeys: Record<string, string>,
  onUse: (provider: string, model: string, usage: JudgmentUsage) => void = () => undefined,
): JudgeService {
  if (config.judges === null) return unconfiguredJudge;
  const provider = config.providers[config.judges.provider];
  const defaultModel = config.judges.model;
  return {
    async judge(call, signal) {
      const model = call.model ?? defaultModel;
      const failed = (error: string, usage: JudgmentUsage | null = null, durationMs = 0, cause: JudgeErrorCause = 'answer') =>
        new JudgeError(error, judgment(call, { model, evaluator: provider.name, durationMs, error, usage }), cause);
      const resolved = resolveProviderKey(provider, providerKeys[providerIntegration(provider.protocol)]);
      if ('failure' in resolved) throw failed(resolved.failure, null, 0, 'key');
      const labels = Object.keys(call.choices) as [string, ...string[]];
      const schema = z.object({ choice: z.enum(labels), reason: z.string() });
      let answer: { object: { choice: string; reason: string }; usage: ModelUsage; durationMs: number };
      try {
        answer = await callModelForObject({
          provider,
          apiKey: resolved.key,
          model,
          system: judgeInstructions(call),
          messages: [{ role: 'user', content: judgeMaterial(call) }],
          signal,
          maxOutputTokens: MAX_JUDGE_OUTPUT_TOKENS,
          schema,
          schemaName: 'judgment',
          schemaDescription: `The chosen label (one of ${labels.join(', ')}) and the reason for it.`,
        });
      } catch (error) {
        if (!(error instanceof ProviderCallError)) throw error;
        if (error.kind === 'schema') throw failed(`the judge answered outside the choices (${labels.join(', ')}): ${error.message}`);
        throw failed(error.message, null, 0, 'provider');
      }
      const usage = judgmentUsage(answer.usage, priceOf(config.prices, model, answer.usage));
      onUse(provider.name, model, usage);
      const { choice } = answer.object;
      // The schema already holds the answer to the labels; checked again, as the score depends on it.
      if (!Object.hasOwn(call.choices, choice))
        throw failed(`the judge answered "${choice}", which is not one of ${labels.join(', ')}`, usage, answer.durationMs);
      const score = call.choices[choice];
      const reason = answer.object.reason.slice(0, MAX_REASON_CHARS);
      const passed = score >= call.threshold;
      return {
        answer: { choice, score, reason, passed },
        judgment: { ...judgment(call, { model, evaluator: provider.name, durationMs: answer.durationMs, error: null, usage }), choice, score, reason },
      };
    },
  };
}

/** The rubric and how to answer; the material judged comes as the user's message. */
export function judgeInstructions(call: JudgeCall): string {
  const choices = Object.entries(call.choices)
    .map(([label, score]) => `- ${label} (score ${score})`)
    .join('\n');
  return [
    'You are a strict, fair judge of an AI coding agent. Judge what the agent did against the rubric below, using only the material you are given.',
    `Rubric:\n${call.prompt}`,
    `Answer with exactly one of these choices and a short reason:\n${choices}`,
  ].join('\n\n');
}

/** The conversation, the agent's final message and the named workspace files, as plain text. */
export function judgeMaterial(call: JudgeCall): string {
  const conversation = call.conversation.map((message) => `[${message.role}]\n${message.text}`).join('\n\n');
  const files = call.files.map((file) => {
    if (file.content === null) return `--- ${file.path} (not found: ${file.missing ?? 'unreadable'})`;
    return `--- ${file.path}${file.truncated ? ' (cut at 20000 characters)' : ''}\n${file.content}`;
  });
  return [
    `Conversation:\n${conversation === '' ? '(none)' : conversation}`,
    `The agent's final message:\n${call.finalMessage ?? '(none)'}`,
    ...(files.length === 0 ? [] : [`Workspace files:\n${files.join('\n\n')}`]),
  ].join('\n\n');
}

function judgment(call: JudgeCall, fields: Pick<Judgment, 'model' | 'evaluator' | 'durationMs' | 'error' | 'usage'>): Judgment {
  return { name: call.name, score: null, choice: null, reason: null, threshold: call.threshold, ...fields };
}

function judgmentUsage(usage: ModelUsage, costUsd: number | null): JudgmentUsage {
  // The providers report no one-hour cache writes apart: 0, with every cache write counted in cacheWriteTokens.
  return { ...usage, cacheWrite1hTokens: 0, costUsd: costUsd === null ? null : Math.round(costUsd * 1e8) / 1e8 };
}

function record(session: TrialSession, provider: string, model: string, usage: JudgmentUsage): void {
  session.judgeUse = addJudgeUse(session.judgeUse ?? null, provider, model, usage);
}

/** The judge calls' use so far, with one more answered call. */
export function addJudgeUse(known: JudgeModelUse | null, provider: string, model: string, usage: JudgmentUsage): JudgeModelUse {
  const use = known ?? { provider, models: [], calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 0, usd: 0 };
  if (!use.models.includes(model)) use.models.push(model);
  use.calls += 1;
  use.inputTokens += usage.inputTokens;
  use.outputTokens += usage.outputTokens;
  use.cacheReadTokens += usage.cacheReadTokens;
  use.cacheWriteTokens += usage.cacheWriteTokens;
  use.totalTokens += usage.totalTokens;
  use.usd = use.usd === null || usage.costUsd === null ? null : use.usd + usage.costUsd;
  return use;
}
