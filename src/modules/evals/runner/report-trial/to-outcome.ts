import { BadRequest } from '#shared/errors';
import type { TrajectoryEntry, TrialOutcome } from '#trial-runner';
import type { JudgeModelUse } from '#trial-runner';
import { MAX_PREPARE_RESULT_CHARS } from '#trial-runner';
import type { ValidationRecord } from '#trial-runner';
import type { TrajectoryEntryDto, TrialResultDto } from './report-trial.dto';

/** What the cut marker between an output's two halves may add beyond the cap (see captured-output). */
const MARKER_ALLOWANCE_BYTES = 256;

/**
 * The validated report as the TrialOutcome the saga would have recorded: each entry keeps only
 * the fields of its kind, and no captured text may be longer than this server lets its own
 * trials capture (400 naming the entry otherwise).
 */
export function toOutcome(result: TrialResultDto, outputCapBytes: number): TrialOutcome {
  const bound = outputCapBytes + MARKER_ALLOWANCE_BYTES;
  return {
    status: result.status,
    exitCode: result.exitCode,
    failure: result.status === 'void' ? (result.failure ?? 'the runner voided this trial') : result.failure,
    voidFields: result.status === 'void' ? [...result.voidFields] : [],
    serviceFault: result.status === 'void' && result.serviceFault,
    timed: result.timed,
    trajectory: result.trajectory.map((entry, index) => toEntry(entry, index, bound)),
    verifySteps: result.verifySteps.map((step) => ({ command: step.command, exitCode: step.exitCode })),
    filesChanged: [...result.filesChanged],
    artifacts: result.artifacts.map((artifact) => ({ path: artifact.path, byteSize: artifact.byteSize, sha256: artifact.sha256 })),
    modelMs: result.modelMs,
    sandboxMs: result.sandboxMs,
    sandboxId: result.sandboxId,
    usage: result.usage && {
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      cacheReadTokens: result.usage.cacheReadTokens,
      cacheWriteTokens: result.usage.cacheWriteTokens,
      totalTokens: result.usage.totalTokens,
      costUsd: result.usage.costUsd,
    },
    harnessVersion: result.harnessVersion,
    sandboxDriver: result.sandboxDriver ?? null,
    conversation: result.conversation && { turns: result.conversation.turns, endReason: result.conversation.endReason },
    agentModel: result.agentModel && {
      provider: result.agentModel.provider,
      models: [...result.agentModel.models],
      calls: result.agentModel.calls,
      inputTokens: result.agentModel.inputTokens,
      outputTokens: result.agentModel.outputTokens,
      cacheReadTokens: result.agentModel.cacheReadTokens,
      cacheWriteTokens: result.agentModel.cacheWriteTokens,
      totalTokens: result.agentModel.totalTokens,
      usd: result.agentModel.usd,
    },
    userModel: result.userModel && {
      provider: result.userModel.provider,
      model: result.userModel.model,
      calls: result.userModel.calls,
      inputTokens: result.userModel.inputTokens,
      outputTokens: result.userModel.outputTokens,
      cacheReadTokens: result.userModel.cacheReadTokens,
      cacheWriteTokens: result.userModel.cacheWriteTokens,
      totalTokens: result.userModel.totalTokens,
      usd: result.userModel.usd,
    },
    // The records and the judge's use went through the DTO's bounds; plain copies of them.
    validations: result.validations === undefined ? [] : (JSON.parse(JSON.stringify(result.validations)) as ValidationRecord[]),
    judgeModel: result.judgeModel ? (JSON.parse(JSON.stringify(result.judgeModel)) as JudgeModelUse) : null,
  };
}

function toEntry(entry: TrajectoryEntryDto, index: number, bound: number): TrajectoryEntry {
  if (entry._tag === 'message') {
    const text = within(entry.text ?? '', bound, `result.trajectory[${index}].text`);
    return { _tag: 'message', role: entry.role ?? 'agent', turn: entry.turn ?? 1, text, at: entry.at ?? 0 };
  }
  if (entry._tag === 'prepare') {
    const prepared = entry.result ?? null;
    if (prepared !== null && JSON.stringify(prepared).length > MAX_PREPARE_RESULT_CHARS) {
      throw new BadRequest(`result.trajectory[${index}].result is more than ${MAX_PREPARE_RESULT_CHARS} characters of JSON, more than a prepare may return.`);
    }
    return { _tag: 'prepare', name: entry.name ?? '', durationMs: entry.durationMs ?? 0, result: prepared };
  }
  if (entry._tag === 'conversation') {
    return { _tag: 'conversation', turns: entry.turns ?? 0, endReason: (entry.endReason ?? 'failed') as never };
  }
  if (entry._tag === 'tool-call') {
    const input = within(entry.input ?? '', bound, `result.trajectory[${index}].input`);
    const output = entry.output == null ? null : within(entry.output, bound, `result.trajectory[${index}].output`);
    return { _tag: 'tool-call', turn: entry.turn ?? 1, tool: entry.tool ?? '', input, output, at: entry.at ?? 0 };
  }
  if (entry._tag === 'model-call') {
    return {
      _tag: 'model-call',
      provider: entry.provider ?? '',
      model: entry.model ?? '',
      protocol: entry.protocol ?? 'openai-chat',
      turn: entry.turn ?? 1,
      stream: entry.stream ?? false,
      status: entry.status ?? 200,
      startedAtMillis: entry.startedAtMillis ?? 0,
      finishedAtMillis: entry.finishedAtMillis ?? 0,
      firstTokenMs: entry.firstTokenMs ?? null,
      inputTokens: entry.inputTokens ?? 0,
      outputTokens: entry.outputTokens ?? 0,
      cacheReadTokens: entry.cacheReadTokens ?? 0,
      cacheWriteTokens: entry.cacheWriteTokens ?? 0,
    };
  }
  return {
    _tag: 'command',
    command: entry.command ?? '',
    exitCode: entry.exitCode ?? 0,
    startedAtMillis: entry.startedAtMillis ?? 0,
    finishedAtMillis: entry.finishedAtMillis ?? 0,
    output: within(entry.output ?? '', bound, `result.trajectory[${index}].output`),
    outputTruncated: entry.outputTruncated ?? false,
  };
}

function within(text: string, bound: number, where: string): string {
  if (text.length > bound || Buffer.byteLength(text, 'utf8') > bound) {
    throw new BadRequest(
      `${where} is longer than this server's output cap allows (${bound} bytes with the cut marker); cut it as the runner's output cap does.`,
    );
  }
  return text;
}
