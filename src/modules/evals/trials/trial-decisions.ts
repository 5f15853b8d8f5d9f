import { DEFAULT_MAX_TURNS } from '#shared/eval-definitions';
import type { EvalCase, EvalSource, VariantDefinition } from '#shared/eval-definitions';
import { merged } from '#shared/merged';
import type { TrialOutcome, TrialSpec } from '#trial-runner';
import { TrialCostInput, trialCosts } from './costs';
import type { TrialEvent, TrialRef, TrialResult } from './trial.events';
import type { ResolvedTrialEnvironment } from './trial-environment';

/** What of a started batch a trial's decisions read (a BatchStarted's data is one). */
export interface TrialBatch {
  batchId: string;
  organization: string;
  cases: EvalCase[];
}

/** What of a planned run a trial's decisions read (a PlannedRun of batch.events.ts is one). */
export interface TrialRun {
  runId: string;
  caseId: string;
  variant: VariantDefinition;
  setup: { prompt: string; source: EvalSource };
  timeoutMs: number;
}

/**
 * What a trial is asked to do and what its outcome records: the decisions the saga, the runner
 * endpoints (a local runner's trials) and rescoring share. Pure: the time arrives as `now`.
 */
export function trialSpec(batch: TrialBatch, run: TrialRun, trialId: string, environment: ResolvedTrialEnvironment): TrialSpec {
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
export const MODEL_PROVIDER_INTEGRATIONS = ['openai', 'anthropic', 'openai-compatible', 'gemini'] as const;

/**
 * Whether this run's trials need the keys of model providers: a simulated user or a judge calls
 * one, and an agent that reaches its model through the gateway (an agent harness, whose driver may
 * name a provider, or a profile that names one) has its calls forwarded with one.
 */
export function callsModelProviders(batch: TrialBatch, run: TrialRun): boolean {
  if (run.variant.harness !== 'command' || run.variant.profile?.provider !== undefined) return true;
  const evalCase = batch.cases.find((candidate) => candidate.id === run.caseId);
  const validator: unknown = evalCase?.validator;
  const judged = typeof validator === 'object' && validator !== null && 'kind' in validator && validator.kind === 'judge';
  return evalCase?.user?.kind === 'simulated' || judged;
}

/** A failure as the API shows it: one line, at most 240 characters. */
export function oneLine(text: string): string {
  return text.split('\n')[0].slice(0, 240);
}

export function resultOf(outcome: TrialOutcome, costInput: TrialCostInput, now: Date): TrialResult {
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
    costs: trialCosts({ ...costInput, usage: outcome.usage, judgeModel: outcome.judgeModel ?? null, agentModel: outcome.agentModel ?? null }),
    harnessVersion: outcome.harnessVersion,
    sandboxDriver: outcome.sandboxDriver ?? null,
  };
}

/** The events that record a trial's outcome, appended together: commands, verify steps, verdict. */
export function trialResultEvents(ref: TrialRef, outcome: TrialOutcome, costInput: TrialCostInput, now: Date): TrialEvent[] {
  let calls = 0;
  const events: TrialEvent[] = outcome.trajectory.map((entry): TrialEvent => {
    if (entry._tag === 'message') return { type: 'TrialMessageRecorded', data: { ...ref, entry } };
    if (entry._tag === 'conversation') return { type: 'TrialConversationEnded', data: { ...ref, entry } };
    if (entry._tag === 'prepare') return { type: 'TrialPrepared', data: { ...ref, entry } };
    if (entry._tag === 'tool-call') return { type: 'TrialToolCalled', data: { ...ref, entry } };
    if (entry._tag === 'model-call') {
      // Recorded bodies travel with their call (the event store keeps large ones in the blob store); the read models keep the entry alone.
      const bodies = outcome.modelCallBodies?.[calls++];
      return { type: 'TrialModelCalled', data: { ...ref, entry, ...(bodies ? { bodies } : {}) } };
    }
    return { type: 'TrialCommandRecorded', data: { ...ref, entry } };
  });
  // Before the verdict: whoever reads the verdict finds the diff already stored.
  if (outcome.diff && outcome.diff.files.length > 0) events.push({ type: 'TrialDiffRecorded', data: { ...ref, diff: outcome.diff } });
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
