import 'reflect-metadata';
import { DecodePipe } from '#infrastructure/http/decode/decode.pipe';
import type { TrialOutcome } from '#modules/evals/execution';
import { trialResultEvents } from '#modules/evals/orchestration/saga-decisions';
import { ReportTrialDto } from '#modules/evals/runner/report-trial/report-trial.dto';
import { toOutcome } from '#modules/evals/runner/report-trial/to-outcome';
import { reportedResult } from '../../src/cli/local/trial-report';

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
});
