import type { TrialSession } from '../trial-session';
import { JudgeCall, JudgeError, judgeCall, JudgeService } from './judge';
import { modelJudge } from './model-judge';
import { runModule } from './module-process';
import type { JudgeAnswer, JudgeRequest, ModuleContextData } from './module-protocol';
import { transpileModule } from './transpile';
import type { ValidationRecord } from './validation-record';
import { ValidationRecorder } from './validation-recorder';

/**
 * Runs the case's validator in the trial's sandbox, after the conversation, and answers its
 * records. The judge form runs there too, as `ctx => ctx.judge(form)`: the files it names are
 * read by the trial's own user inside the sandbox, never by the server.
 */
export async function runValidator(session: TrialSession, context: ModuleContextData): Promise<ValidationRecord[]> {
  const validator = session.spec.validator;
  if (validator === null) return [];
  const recorder = new ValidationRecorder(validator, session.redactor);
  const clock = session.settings.clock;
  let code: string | null = null;
  if (validator.kind !== 'judge') {
    const compiled = await transpileModule(validator.source);
    if ('failure' in compiled) {
      const startedAt = clock.now().getTime();
      return recorder.records({ kind: 'error', failure: compiled.failure, detail: null }, { startedAt, durationMs: 0, exitCode: null, input: context });
    }
    code = compiled.code;
  }
  const judge = modelJudge(session);
  const { name, kind: _kind, ...form } = validator.kind === 'judge' ? validator : { name: validator.name, kind: 'code' };
  const run = await runModule(session, {
    mode: validator.kind === 'judge' ? 'judge' : 'validator',
    name,
    code,
    judge: validator.kind === 'judge' ? { ...form, name } : undefined,
    context,
    timeoutMs: session.settings.validatorTimeoutMs,
    onLog: (level, text, at) => recorder.log(level, text, at),
    onJudge: (request) => answerJudge(session, judge, recorder, request, name, context),
  });
  return recorder.records(run.end, { ...run, input: context });
}

async function answerJudge(
  session: TrialSession,
  judge: JudgeService,
  recorder: ValidationRecorder,
  request: JudgeRequest,
  name: string,
  context: ModuleContextData,
): Promise<JudgeAnswer> {
  const startedAt = session.settings.clock.now().getTime();
  const elapsed = () => session.settings.clock.now().getTime() - startedAt;
  const input = {
    prompt: request.prompt,
    choices: request.choices,
    threshold: request.threshold,
    model: request.model,
    files: request.files.map((file) => file.path),
  };
  if (!recorder.callsLeft) {
    const error = 'a validator may call judge at most 64 times';
    recorder.call({ startedAt, durationMs: 0, input, answer: null, error, judgment: null });
    throw new Error(error);
  }
  const call = judgeCall(request, name, context);
  if ('problem' in call) {
    recorder.call({ startedAt, durationMs: 0, input, answer: null, error: call.problem, judgment: null });
    throw new Error(call.problem);
  }
  try {
    const { answer, judgment } = await judge.judge(redacted(call, session), session.signal);
    recorder.call({ startedAt, durationMs: elapsed(), input, answer, error: null, judgment });
    return answer;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    recorder.call({ startedAt, durationMs: elapsed(), input, answer: null, error: message, judgment: error instanceof JudgeError ? error.judgment : null });
    throw new Error(message);
  }
}

/**
 * What the judge reads, with the trial's secrets replaced: the workspace files and the agent's
 * words may hold a value of the organization (an agent that echoed its token), and the judge is
 * a third party.
 */
function redacted(call: JudgeCall, session: TrialSession): JudgeCall {
  const { redactor } = session;
  return {
    ...call,
    prompt: redactor.redact(call.prompt),
    files: call.files.map((file) => ({ ...file, content: file.content === null ? null : redactor.redact(file.content) })),
    conversation: call.conversation.map((message) => ({ ...message, text: redactor.redact(message.text) })),
    finalMessage: call.finalMessage === null ? null : redactor.redact(call.finalMessage),
  };
}
