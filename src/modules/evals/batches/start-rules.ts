import * as path from 'node:path';
import { BadRequest } from '#shared/errors';
import type { EvalCase, EvalSource, EvalSuite, VariantDefinition } from '#shared/eval-definitions';
import { DEFAULT_JUDGE_CHOICES, DEFAULT_JUDGE_THRESHOLD } from '#shared/eval-definitions';
import { placeholders, variantIdentity } from '../shared/identity';

export const MAX_TRIALS_PER_BATCH = 100;

export interface BatchPlan {
  suite: EvalSuite;
  cases: EvalCase[];
  variants: VariantDefinition[];
  trials: number;
}

/**
 * The rules a start must meet beyond the body's schema, each refused with 400 and a message
 * that says what to change. Shared by `evals.batches.start` and `evals.cases.run`.
 */
export function checkBatchPlan(plan: BatchPlan, options: { localRunner: boolean } = { localRunner: false }): void {
  const size = plan.cases.length * plan.variants.length * plan.trials;
  if (size > MAX_TRIALS_PER_BATCH) {
    throw new BadRequest(`A batch may contain at most ${MAX_TRIALS_PER_BATCH} trials, and this one asks for ${size}.`);
  }
  plan.variants.forEach((variant, index) => checkVariant(variant, index, options.localRunner));
  if (options.localRunner && !plan.variants.some((variant) => variant.sandbox === 'local')) {
    throw new BadRequest('A local runner starts batches with at least one variant of sandbox "local"; start the others with evals.batches.start.');
  }
  checkDistinctVariants(plan.variants);
  checkDistinctCases(plan.cases);
  checkSource(plan.suite.source, 'suite.source');
  for (const evalCase of plan.cases) checkCase(plan.suite, evalCase);
}

function checkVariant(variant: VariantDefinition, index: number, localRunner: boolean): void {
  const where = `variants[${index}]`;
  if (variant.harness === 'command' && !variant.profile?.run) {
    throw new BadRequest(`${where} uses the command harness, which needs profile.run: the command to run.`);
  }
  if (variant.harness !== 'command' && variant.profile?.run !== undefined) {
    throw new BadRequest(`${where} uses ${variant.harness}, which takes no profile.run; remove it (profile.install is allowed).`);
  }
  if (variant.sandbox === 'local' && !localRunner) {
    throw new BadRequest(`${where}: The local sandbox runs on your machine: start it with the CLI's local mode.`);
  }
  for (const file of Object.keys(variant.profile?.files ?? {})) checkRelativePath(file, `${where}.profile.files`);
}

function checkDistinctVariants(variants: VariantDefinition[]): void {
  const seen = new Map<string, number>();
  variants.forEach((variant, index) => {
    const identity = variantIdentity(variant, null);
    const first = seen.get(identity);
    if (first !== undefined) {
      throw new BadRequest(
        `variants[${first}] and variants[${index}] are the same variant (harness, model, sandbox and profile); remove one or give their profiles different names.`,
      );
    }
    seen.set(identity, index);
  });
}

function checkDistinctCases(cases: EvalCase[]): void {
  const seen = new Set<string>();
  for (const evalCase of cases) {
    if (seen.has(evalCase.id)) throw new BadRequest(`Two cases have the id "${evalCase.id}"; case ids must be unique in a batch.`);
    seen.add(evalCase.id);
  }
}

function checkCase(suite: EvalSuite, evalCase: EvalCase): void {
  const where = `case "${evalCase.id}"`;
  const user = evalCase.user;
  if (user?.kind === 'simulated' && (user.harness === undefined) !== (user.model === undefined)) {
    const missing = user.harness === undefined ? 'harness' : 'model';
    throw new BadRequest(`${where}: a simulated user takes harness and model together; add its ${missing} or remove both.`);
  }
  checkSource(evalCase.source, `${where} source`);
  checkValidator(evalCase);
  // `{{prepare.key}}` is filled by the case's prepare at run time; without a prepare nothing fills it.
  const filledLater = (name: string) => evalCase.prepare !== null && name.startsWith('prepare.');
  const missing = placeholders(suite.prompt).filter((name) => !(name in evalCase.variables) && !filledLater(name));
  if (missing.length > 0) {
    throw new BadRequest(`The suite prompt uses {{${missing[0]}}}, which ${where} does not give in its variables; add it.`);
  }
}

function checkValidator(evalCase: EvalCase): void {
  const validator = evalCase.validator;
  const where = `case "${evalCase.id}" validator`;
  if (validator === null) return;
  if (validator.kind === 'judge') {
    for (const file of validator.files ?? []) checkRelativePath(file, `${where} files`);
    const scores = Object.values(validator.choices ?? DEFAULT_JUDGE_CHOICES);
    const threshold = validator.threshold ?? DEFAULT_JUDGE_THRESHOLD;
    if (!scores.some((score) => score >= threshold)) {
      throw new BadRequest(`${where}: no choice scores ${threshold} or more, so no trial could pass; lower threshold or add a choice that reaches it.`);
    }
    return;
  }
  const seen = new Set<number>();
  for (const entry of validator.manifest ?? []) {
    if (seen.has(entry.index)) throw new BadRequest(`${where}: two manifest entries have the index ${entry.index}; each names one result of the array.`);
    seen.add(entry.index);
  }
}

function checkSource(source: EvalSource | null, where: string): void {
  if (source?.kind !== 'files') return;
  for (const file of Object.keys(source.files)) checkRelativePath(file, `${where} files`);
}

function checkRelativePath(file: string, where: string): void {
  const normal = path.posix.normalize(file);
  if (file === '' || path.posix.isAbsolute(file) || normal === '..' || normal.startsWith('../') || file.includes('\u0000')) {
    throw new BadRequest(`${where}: "${file}" must be a relative path inside the workspace (no leading "/" and no "..").`);
  }
}
