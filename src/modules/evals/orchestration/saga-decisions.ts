import type { BatchFailed, BatchFinished, BatchStarted, PlannedRun } from '../batches/batch.events';
import type { RunFinished } from '../runs/run.events';
import { sumCosts, TrialCostInput, trialCosts } from '../trials/costs';
import { computeDistribution } from '../trials/distribution';
import type { TrialEvent, TrialRef, TrialResult } from '../trials/trial.events';
import type { SagaBatch, SagaRun, SagaTrial } from './saga-state';
import { DEFAULT_MAX_TURNS } from '#shared/eval-definitions';
import { TrialOutcome, TrialSpec, voidOutcome } from '#trial-runner';
import type { ResolvedTrialEnvironment } from './trial-environment';
import { merged } from '#shared/merged';

/** Why a trial is void whose server instance stopped (it said so as it stopped, or its claim lapsed). */
export const ABANDONED = 'abandoned: the instance running this trial stopped';

/**
 * Pure decisions of the saga: what to run, and what a finished trial, run or batch records.
 * The time arrives as `now`, so a decision depends on its arguments only.
 */
export function trialSpec(batch: BatchStarted['data'], run: PlannedRun, trialId: string, environment: ResolvedTrialEnvironment): TrialSpec {
  const evalCase = batch.cases.find((candidate) => candidate.id === run.caseId);
  if (!evalCase) throw new Error(`Batch "${batch.batchId}" has no case "${run.caseId}" for run "${run.runId}".`);
  const profileEnv = run.variant.profile?.env ?? {};
  return {
    trialId,
    organization: batch.organization,
    prompt: run.setup.prompt,
    source: run.setup.source,
    cache: evalCase.cache,
    profile: run.variant.profile,
    harness: run.variant.harness,
    model: run.variant.model,
    sandbox: run.variant.sandbox,
    timeoutMs: run.timeoutMs,
    verify: evalCase.verify,
    env: { ...environment.env, ...profileEnv },
    secrets: environment.secrets,
    user: evalCase.user,
    maxTurns: evalCase.maxTurns ?? DEFAULT_MAX_TURNS,
    variables: evalCase.variables,
    validator: evalCase.validator,
    prepare: evalCase.prepare,
    providerKeys: environment.providerKeys ?? {},
  };
}

/** The connector integrations whose keys serve model providers (the simulated user, judges). */
export const MODEL_PROVIDER_INTEGRATIONS = ['openai', 'anthropic', 'openai-compatible'] as const;

/** Whether the service calls a model provider for this run's trials: a simulated user, or a judge. */
export function callsModelProviders(batch: BatchStarted['data'], run: PlannedRun): boolean {
  const evalCase = batch.cases.find((candidate) => candidate.id === run.caseId);
  const validator: unknown = evalCase?.validator;
  const judged = typeof validator === 'object' && validator !== null && 'kind' in validator && validator.kind === 'judge';
  return evalCase?.user?.kind === 'simulated' || judged;
}

export function hasSimulatedUser(batch: SagaBatch, run: SagaRun): boolean {
  return batch.started.cases.find((candidate) => candidate.id === run.run.caseId)?.user?.kind === 'simulated';
}

/** A failure as the API shows it: one line, at most 240 characters. */
export function oneLine(text: string): string {
  return text.split('\n')[0].slice(0, 240);
}

function resultOf(outcome: TrialOutcome, costInput: TrialCostInput, now: Date): TrialResult {
  return {
    finishedAt: now.toISOString(),
    exitCode: outcome.exitCode,
    timed: outcome.timed,
    modelMs: outcome.modelMs,
    sandboxMs: outcome.sandboxMs,
    sandboxId: outcome.sandboxId,
    filesChanged: outcome.filesChanged,
    artifacts: outcome.artifacts,
    usage: outcome.usage,
    costs: trialCosts({ ...costInput, usage: outcome.usage, judgeModel: outcome.judgeModel ?? null }),
    harnessVersion: outcome.harnessVersion,
    sandboxDriver: outcome.sandboxDriver ?? null,
  };
}

/** The events that record a trial's outcome, appended together: commands, verify steps, verdict. */
export function trialResultEvents(ref: TrialRef, outcome: TrialOutcome, costInput: TrialCostInput, now: Date): TrialEvent[] {
  const events: TrialEvent[] = outcome.trajectory.map((entry): TrialEvent => {
    if (entry._tag === 'message') return { type: 'TrialMessageRecorded', data: { ...ref, entry } };
    if (entry._tag === 'conversation') return { type: 'TrialConversationEnded', data: { ...ref, entry } };
    if (entry._tag === 'prepare') return { type: 'TrialPrepared', data: { ...ref, entry } };
    return { type: 'TrialCommandRecorded', data: { ...ref, entry } };
  });
  for (const step of outcome.verifySteps) events.push({ type: 'TrialVerified', data: merged(ref, step) });
  for (const validation of outcome.validations ?? []) events.push({ type: 'TrialValidated', data: { ...ref, validation } });
  const result = resultOf(outcome, costInput, now);
  if (outcome.status === 'void') {
    const failure = outcome.failure ?? 'the trial was voided';
    events.push({ type: 'TrialVoided', data: merged(ref, result, { failure, voidFields: outcome.voidFields, serviceFault: outcome.serviceFault }) });
  } else {
    events.push({ type: 'TrialScored', data: merged(ref, result, { status: outcome.status, failure: outcome.failure }) });
  }
  return events;
}

export function serviceFaultOutcome(error: Error): TrialOutcome {
  return voidOutcome({ failure: oneLine(`the service failed to run this trial: ${error.message}`), voidFields: [], serviceFault: true });
}

/** A trial a stopped instance was running: void, and counted as executed (not a service fault). */
export function abandonedTrial(ref: TrialRef, run: PlannedRun, now: Date): TrialEvent {
  const costInput = { harness: run.variant.harness, model: run.variant.model, sandbox: run.variant.sandbox, usage: null, hasSimulatedUser: false };
  const result = resultOf(voidOutcome({ failure: ABANDONED, voidFields: [], serviceFault: false }), costInput, now);
  return { type: 'TrialVoided', data: merged(ref, result, { failure: ABANDONED, voidFields: [], serviceFault: false }) };
}

/** A run is `failed` only when every one of its trials errored inside the service itself. */
export function runFinished(batch: BatchStarted['data'], run: SagaRun, trials: SagaTrial[], now: Date): RunFinished {
  const failed = trials.length > 0 && trials.every((trial) => trial.serviceFault);
  return {
    type: 'RunFinished',
    data: {
      runId: run.run.runId,
      batchId: batch.batchId,
      organization: batch.organization,
      status: failed ? 'failed' : 'finished',
      failure: failed ? (trials[0].failure ?? 'the service could not run this run') : null,
      distribution: computeDistribution(trials.map((trial) => ({ status: trial.status, commands: trial.commands }))),
      costs: sumCosts(trials.flatMap((trial) => (trial.costs ? [trial.costs] : []))),
      finishedAt: now.toISOString(),
    },
  };
}

/** A batch is `failed` when one of its runs failed: "K of N runs could not run: REASON". */
export function batchEnding(batch: BatchStarted['data'], runs: SagaRun[], now: Date): BatchFinished | BatchFailed {
  const failed = runs.filter((run) => run.failed);
  const finishedAt = now.toISOString();
  const { batchId, organization } = batch;
  if (failed.length === 0) return { type: 'BatchFinished', data: { batchId, organization, finishedAt } };
  const failure = `${failed.length} of ${runs.length} runs could not run: ${failed[0].failure ?? 'unknown reason'}`;
  return { type: 'BatchFailed', data: { batchId, organization, finishedAt, failure } };
}
