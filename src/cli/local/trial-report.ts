import type { TrialOutcome } from '#trial-runner';

/**
 * The outcome as runner.trials.report takes it: exactly the fields the server validates, so a
 * field the runner adds later never makes a report refused (the server forbids unknown ones).
 */
export function reportedResult(outcome: TrialOutcome): Record<string, unknown> {
  return {
    status: outcome.status,
    exitCode: outcome.exitCode,
    failure: outcome.failure,
    voidFields: outcome.voidFields,
    serviceFault: outcome.serviceFault,
    timed: outcome.timed,
    trajectory: outcome.trajectory.map((entry) => {
      if (entry._tag === 'model-call') {
        const { provider, model, protocol, turn, stream, status, startedAtMillis, finishedAtMillis, firstTokenMs } = entry;
        const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = entry;
        return {
          _tag: 'model-call',
          provider,
          model,
          protocol,
          turn,
          stream,
          status,
          startedAtMillis,
          finishedAtMillis,
          firstTokenMs,
          inputTokens,
          outputTokens,
          cacheReadTokens,
          cacheWriteTokens,
        };
      }
      if (entry._tag === 'message') return { _tag: 'message', role: entry.role, turn: entry.turn, text: entry.text, at: entry.at };
      if (entry._tag === 'conversation') return { _tag: 'conversation', turns: entry.turns, endReason: entry.endReason };
      if (entry._tag === 'tool-call') return { _tag: 'tool-call', turn: entry.turn, tool: entry.tool, input: entry.input, output: entry.output, at: entry.at };
      if (entry._tag === 'prepare') return { _tag: 'prepare', name: entry.name, durationMs: Math.round(entry.durationMs), result: entry.result };
      const { command, exitCode, startedAtMillis, finishedAtMillis, output, outputTruncated } = entry;
      return { _tag: 'command', command, exitCode, startedAtMillis, finishedAtMillis, output, outputTruncated };
    }),
    verifySteps: outcome.verifySteps.map(({ command, exitCode }) => ({ command, exitCode })),
    filesChanged: outcome.filesChanged,
    artifacts: outcome.artifacts.map(({ path, byteSize, sha256 }) => ({ path, byteSize, sha256 })),
    modelMs: Math.round(outcome.modelMs),
    sandboxMs: Math.round(outcome.sandboxMs),
    sandboxId: outcome.sandboxId,
    usage: outcome.usage && {
      inputTokens: outcome.usage.inputTokens,
      outputTokens: outcome.usage.outputTokens,
      cacheReadTokens: outcome.usage.cacheReadTokens,
      cacheWriteTokens: outcome.usage.cacheWriteTokens,
      totalTokens: outcome.usage.totalTokens,
      costUsd: outcome.usage.costUsd,
    },
    harnessVersion: outcome.harnessVersion,
    sandboxDriver: outcome.sandboxDriver ?? null,
    conversation: outcome.conversation ? { turns: outcome.conversation.turns, endReason: outcome.conversation.endReason } : null,
    userModel: outcome.userModel
      ? {
          provider: outcome.userModel.provider,
          model: outcome.userModel.model,
          calls: outcome.userModel.calls,
          inputTokens: outcome.userModel.inputTokens,
          outputTokens: outcome.userModel.outputTokens,
          cacheReadTokens: outcome.userModel.cacheReadTokens,
          cacheWriteTokens: outcome.userModel.cacheWriteTokens,
          totalTokens: outcome.userModel.totalTokens,
          usd: outcome.userModel.usd,
        }
      : null,
    // The records as the runner made them: the server's DTO holds them to the same bounds.
    validations: outcome.validations ?? [],
    judgeModel: outcome.judgeModel ?? null,
    // The agent's metered calls, without what its own output reported (the server keeps its own figures).
    agentModel: outcome.agentModel
      ? {
          provider: outcome.agentModel.provider,
          models: outcome.agentModel.models,
          calls: outcome.agentModel.calls,
          inputTokens: outcome.agentModel.inputTokens,
          outputTokens: outcome.agentModel.outputTokens,
          cacheReadTokens: outcome.agentModel.cacheReadTokens,
          cacheWriteTokens: outcome.agentModel.cacheWriteTokens,
          totalTokens: outcome.agentModel.totalTokens,
          usd: outcome.agentModel.usd,
        }
      : null,
  };
}
