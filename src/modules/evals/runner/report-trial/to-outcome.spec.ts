import 'reflect-metadata';
import { DecodePipe } from '#infrastructure/http/decode/decode.pipe';
import type { TrialOutcome } from '#trial-runner';
import { trialResultEvents } from '../../trials/trial-decisions';
import { ReportTrialDto } from './report-trial.dto';
import { toOutcome } from './to-outcome';
import { reportedResult } from '../../../../cli/local/trial-report';

const userModel = {
  provider: 'anthropic',
  model: 'claude-haiku',
  calls: 3,
  inputTokens: 900,
  outputTokens: 60,
  cacheReadTokens: 100,
  cacheWriteTokens: 0,
  totalTokens: 1060,
  usd: 0.0042,
};

/** A simulated-user trial as the trial runner ends it on the runner's machine. */
const outcome: TrialOutcome = {
  status: 'passed',
  exitCode: 0,
  failure: null,
  voidFields: [],
  serviceFault: false,
  timed: false,
  trajectory: [
    { _tag: 'message', role: 'user', turn: 1, text: 'hi', at: 1 },
    { _tag: 'message', role: 'agent', turn: 1, text: 'hello', at: 2 },
    { _tag: 'conversation', turns: 1, endReason: 'user-done' },
  ],
  verifySteps: [{ command: 'true', exitCode: 0 }],
  filesChanged: [],
  artifacts: [],
  modelMs: 12.4,
  sandboxMs: 30.6,
  sandboxId: 'sbx_1',
  usage: null,
  harnessVersion: null,
  sandboxDriver: 'process',
  authFailed: false,
  conversation: { turns: 1, endReason: 'user-done' },
  userModel,
};

/** What the server makes of a report: its decoder, then the outcome the saga's decisions take. */
function received(result: Record<string, unknown>): TrialOutcome {
  const body = new DecodePipe().transform(
    { id: 'bat_1', trialId: 'trl_1', lease: 'lse_1', result: JSON.parse(JSON.stringify(result)) },
    { type: 'body', metatype: ReportTrialDto },
  ) as ReportTrialDto;
  return toOutcome(body.result, 65536);
}

describe('a local trial report', () => {
  it("carries the conversation and the simulated user's model use to the saga's costs", () => {
    const result = reportedResult(outcome);
    expect(result).toMatchObject({ conversation: { turns: 1, endReason: 'user-done' }, userModel });
    expect(result).not.toHaveProperty('authFailed');

    const server = received(result);
    expect(server.conversation).toEqual({ turns: 1, endReason: 'user-done' });
    expect(server.userModel).toEqual(userModel);
    const costInput = { harness: 'command', model: 'none', sandbox: 'local', usage: null, hasSimulatedUser: true, userModel: server.userModel };
    const ref = { trialId: 'trl_1', runId: 'run_1', batchId: 'bat_1', organization: 'acme' };
    const scored = trialResultEvents(ref, server, costInput, new Date(0)).at(-1)!;
    expect(scored.type).toBe('TrialScored');
    const user = (scored.data as { costs: { components: Array<{ component: string }> } }).costs.components.find((c) => c.component === 'user');
    expect(user).toMatchObject({ classification: 'simulated-user', usd: 0.0042, source: 'anthropic', detail: { calls: 3, totalTokens: 1060 } });
  });

  it('sends null for a trial that ended before a conversation, which the server takes as none', () => {
    const result = reportedResult({ ...outcome, conversation: undefined, userModel: null });
    expect(result).toMatchObject({ conversation: null, userModel: null });
    expect(received(result)).toMatchObject({ conversation: null, userModel: null });
  });

  it("carries the prepare, the validator's records and the judge's model use, held to the server's bounds", () => {
    const capture = (text: string) => ({ text, format: 'text' as const, state: text === '' ? ('empty' as const) : ('captured' as const), truncated: false });
    const judgment = {
      name: 'kind',
      model: 'judge-model',
      evaluator: 'grader',
      score: 1,
      choice: 'pass',
      reason: 'Polite.',
      threshold: 0.5,
      durationMs: 40,
      error: null,
      usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, totalTokens: 12, costUsd: 0.001 },
    };
    const validation = {
      id: 'val_1',
      index: 1,
      name: 'kind',
      kind: 'judge' as const,
      status: 'passed' as const,
      startedAt: 5,
      durationMs: 50,
      message: 'Polite.',
      exitCode: 0,
      truncated: false,
      input: { text: '', format: 'text' as const, state: 'omitted' as const, truncated: false },
      output: capture('{"passed": true}'),
      error: capture(''),
      calls: [{ index: 1, method: 'answer' as const, startedAt: 6, durationMs: 40, input: capture('{}'), output: capture('{}'), error: capture('') }],
      logs: [{ index: 1, at: 7, level: 'log' as const, value: capture('hi') }],
      judgment,
      metadata: capture(''),
    };
    const judgeModel = {
      provider: 'grader',
      models: ['judge-model'],
      calls: 1,
      inputTokens: 10,
      outputTokens: 2,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      totalTokens: 12,
      usd: 0.001,
    };
    const prepared: TrialOutcome = {
      ...outcome,
      trajectory: [{ _tag: 'prepare', name: 'setUp', durationMs: 12.7, result: { ticket: 'T-1' } }, ...outcome.trajectory],
      validations: [validation],
      judgeModel,
    };
    const server = received(reportedResult(prepared));
    expect(server.trajectory[0]).toEqual({ _tag: 'prepare', name: 'setUp', durationMs: 13, result: { ticket: 'T-1' } });
    expect(server.validations).toEqual([validation]);
    expect(server.judgeModel).toEqual(judgeModel);
    const ref = { trialId: 'trl_1', runId: 'run_1', batchId: 'bat_1', organization: 'acme' };
    const costInput = { harness: 'command', model: 'none', sandbox: 'local', usage: null, hasSimulatedUser: false };
    const events = trialResultEvents(ref, server, costInput, new Date(0));
    expect(events.map((event) => event.type)).toEqual([
      'TrialPrepared',
      'TrialMessageRecorded',
      'TrialMessageRecorded',
      'TrialConversationEnded',
      'TrialVerified',
      'TrialValidated',
      'TrialScored',
    ]);
    const judge = (events.at(-1)!.data as { costs: { components: Array<{ component: string }> } }).costs.components.find((c) => c.component === 'judge');
    expect(judge).toMatchObject({ classification: 'judge', usd: 0.001, source: 'grader', detail: { calls: 1, totalTokens: 12 } });

    // Beyond the bounds: a capture over 64,000 characters, a 65th log, a prepare answer over 16,000.
    const decode = (result: Record<string, unknown>) => () => received(result);
    const long = { ...validation, output: capture('x'.repeat(64_101)) };
    expect(decode(reportedResult({ ...prepared, validations: [long] }))).toThrow();
    const chatty = { ...validation, logs: Array.from({ length: 65 }, (_, i) => ({ index: 1, at: i, level: 'log' as const, value: capture('x') })) };
    expect(decode(reportedResult({ ...prepared, validations: [chatty] }))).toThrow();
    const big = { ...prepared, trajectory: [{ _tag: 'prepare' as const, name: 'p', durationMs: 1, result: { pad: 'x'.repeat(16_000) } }] };
    expect(decode(reportedResult(big))).toThrow('more than 16000 characters of JSON');
  });
});

describe("a local trial report of the agent's model calls", () => {
  const call = {
    _tag: 'model-call' as const,
    provider: 'mine',
    model: 'my-model',
    protocol: 'anthropic' as const,
    turn: 1,
    stream: true,
    status: 200,
    startedAtMillis: 10,
    finishedAtMillis: 30,
    firstTokenMs: 5,
    inputTokens: 700,
    outputTokens: 50,
    cacheReadTokens: 3,
    cacheWriteTokens: 0,
  };
  const agentModel = {
    provider: 'mine',
    models: ['my-model'],
    calls: 1,
    inputTokens: 700,
    outputTokens: 50,
    cacheReadTokens: 3,
    cacheWriteTokens: 0,
    totalTokens: 753,
    usd: 0.0018,
  };
  const metered: TrialOutcome = { ...outcome, trajectory: [...outcome.trajectory, call], agentModel };

  it('carries each call and the metered use to the saga, which records the model cost from them', () => {
    const back = received(reportedResult(metered));
    expect(back.trajectory.at(-1)).toEqual(call);
    expect(back.agentModel).toEqual(agentModel);
    const events = trialResultEvents(
      { trialId: 'trl_1', runId: 'run_1', batchId: 'bat_1', organization: 'acme' },
      back,
      { harness: 'command', model: 'my-model', sandbox: null, usage: back.usage, hasSimulatedUser: false },
      new Date(0),
    );
    expect(events.map((event) => event.type)).toContain('TrialModelCalled');
  });

  it.each([
    ['status', 99],
    ['status', 600],
    ['inputTokens', -1],
    ['inputTokens', 1e12 + 1],
    ['protocol', 'grpc'],
    ['firstTokenMs', -1],
    ['turn', 0],
    ['provider', ''],
  ])('refuses a call whose %s is %j, and takes the bounds themselves', (field, value) => {
    const bad = reportedResult({ ...metered, trajectory: [{ ...call, [field]: value }] });
    expect(() => received(bad)).toThrow(`["trajectory"][0]["${field}"]`);
  });

  it.each([
    ['status', 100],
    ['status', 599],
    ['inputTokens', 0],
    ['inputTokens', 1e12],
    ['firstTokenMs', null],
    ['turn', 1000],
  ])('takes a call whose %s is %j', (field, value) => {
    expect(received(reportedResult({ ...metered, trajectory: [{ ...call, [field]: value }] })).trajectory[0]).toMatchObject({ [field]: value });
  });
});
