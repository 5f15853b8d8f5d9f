import { JudgeError, JudgeService, Redactor, ValidationRecord, ValidationRecorder } from '#trial-runner';
import type { JudgeValidator } from '#shared/eval-definitions';
import type { TrialView } from '../trial-view';
import { storedConversation } from './stored-conversation';

/** A judge call that no trial's record can hold: the provider failed, or has no key. Nothing is recorded. */
export class RescoreFailure extends Error {
  constructor(
    message: string,
    readonly failedOn: 'key' | 'provider',
  ) {
    super(message);
    this.name = 'RescoreFailure';
  }
}

export interface TrialJudging {
  judge: JudgeService;
  form: JudgeValidator & { choices: Record<string, number>; threshold: number };
  validator: JudgeValidator;
  redactor: Redactor;
  trial: TrialView;
  prompt: string;
  now: () => number;
}

/**
 * Judges one stored trial with the rescore's form, recording it as the trial's own judge would
 * have (the validation recorder of the runner): passed or failed by the threshold; an answer
 * outside the choices is a validation in error, and the trial void in the new distribution.
 */
export async function judgeTrial({
  judge,
  form,
  validator,
  redactor,
  trial,
  prompt,
  now,
}: TrialJudging): Promise<{ status: 'passed' | 'failed' | 'void'; validations: ValidationRecord[] }> {
  const recorder = new ValidationRecorder(validator, redactor);
  const { conversation, finalMessage } = storedConversation(trial, prompt);
  const startedAt = now();
  const input = { prompt: form.prompt, choices: form.choices, threshold: form.threshold, model: form.model, files: [] };
  const call = {
    name: form.name,
    prompt: form.prompt,
    choices: form.choices,
    threshold: form.threshold,
    model: form.model ?? null,
    files: [],
    conversation,
    finalMessage,
  };
  const run = (durationMs: number) => ({ startedAt, durationMs, exitCode: null, input: { conversation, finalMessage } });
  try {
    const { answer, judgment } = await judge.judge(call);
    recorder.call({ startedAt, durationMs: now() - startedAt, input, answer, error: null, judgment });
    const records = recorder.records({ kind: 'result', value: { passed: answer.passed, score: answer.score, message: answer.reason } }, run(now() - startedAt));
    return { status: records.every((record) => record.status === 'passed') ? 'passed' : 'failed', validations: records };
  } catch (error) {
    if (!(error instanceof JudgeError)) throw error;
    if (error.failedOn !== 'answer') throw new RescoreFailure(error.message, error.failedOn);
    recorder.call({ startedAt, durationMs: now() - startedAt, input, answer: null, error: error.message, judgment: error.judgment });
    return { status: 'void', validations: recorder.records({ kind: 'error', failure: error.message, detail: null }, run(now() - startedAt)) };
  }
}
