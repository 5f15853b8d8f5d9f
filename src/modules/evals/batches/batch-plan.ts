import { newId } from '#shared/ids';
import type { EvalCase, EvalSuite, VariantDefinition } from '#shared/eval-definitions';
import { DEFAULT_TIMEOUT_MS, validatorText } from '#shared/eval-definitions';
import { definitionHash, definitionParts, profileVersion, renderPrompt, variantId, variantIdentity } from '../shared/identity';
import type { PlannedRun, RunSetup } from './batch.events';
import type { PromptReference } from './prompt-references';
import type { BatchPlan } from './start-rules';

export interface PlannedBatch {
  batchId: string;
  runs: PlannedRun[];
  /** Per case: the definition's named parts, for its version. */
  parts: Map<string, Array<[string, string]>>;
}

/** Gives every run and trial of a plan its ids, hashes and recorded set-up (with the prompt versions its suite prompt named). */
export function planBatch(plan: BatchPlan, organization: string, now: Date, defaultUserModel: string, prompts: readonly PromptReference[] = []): PlannedBatch {
  const batchId = newId('bat', now.getTime());
  const parts = new Map<string, Array<[string, string]>>();
  const runs: PlannedRun[] = [];
  for (const evalCase of plan.cases) {
    const caseParts = definitionParts(plan.suite, evalCase);
    parts.set(evalCase.id, caseParts);
    const userModel = evalCase.user?.kind === 'simulated' ? (evalCase.user.model ?? defaultUserModel) : null;
    for (const variant of plan.variants) {
      runs.push(planRun(plan, organization, evalCase, variant, userModel, definitionHash(caseParts), now));
    }
  }
  if (prompts.length > 0) {
    const named = prompts.map((reference) => ({ prompt: `${reference.promptId}@${reference.version}`, channel: reference.channel ?? null }));
    for (const run of runs) run.setup.prompts = named;
  }
  return { batchId, runs, parts };
}

function planRun(
  plan: BatchPlan,
  organization: string,
  evalCase: EvalCase,
  variant: VariantDefinition,
  userModel: string | null,
  hash: string,
  now: Date,
): PlannedRun {
  return {
    runId: newId('run', now.getTime()),
    caseId: evalCase.id,
    caseName: evalCase.name,
    variantId: variantId(organization, evalCase.id, variantIdentity(variant, userModel)),
    variant,
    userModel,
    definitionHash: hash,
    profileVersion: profileVersion(variant.profile),
    trialIds: Array.from({ length: plan.trials }, () => newId('trl', now.getTime())),
    setup: { ...runSetup(plan.suite, evalCase), ...(variant.profile?.replay ? { replayOf: { ...variant.profile.replay } } : {}) },
    timeoutMs: evalCase.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    tags: evalCase.tags,
  };
}

export function runSetup(suite: EvalSuite, evalCase: EvalCase): RunSetup {
  return {
    prepare: evalCase.prepare?.source ?? null,
    prompt: renderPrompt(suite.prompt, evalCase.variables),
    source: evalCase.source ?? suite.source ?? { kind: 'empty' },
    validator: validatorText(evalCase.validator),
    verify: evalCase.verify,
    validatorFiles: validatorFiles(evalCase),
  };
}

/**
 * The files a run's validator was given, so the run can be checked again: a code validator's
 * module, or the judge form (its rubric, choices and the workspace paths it reads).
 */
function validatorFiles(evalCase: EvalCase): Array<{ path: string; content: string }> {
  const validator = evalCase.validator;
  if (validator === null) return [];
  if (validator.kind === 'judge') return [{ path: `${validator.name}.judge.json`, content: JSON.stringify(validator, null, 2) }];
  // As its author wrote it when the CLI sent that beside the bundle; the bundle otherwise.
  if (validator.written) return [{ path: validator.written.path, content: validator.written.content }];
  return [{ path: `${validator.name}.ts`, content: validator.source }];
}
