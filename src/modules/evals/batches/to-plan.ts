import type { CaseDto, SourceDto, SuiteDto, VariantDto } from '../shared/definition.dto';
import type { EvalCase, EvalSource, EvalSuite, EvalUser, Harness, Profile, Sandbox, Validator, VariantDefinition } from '#shared/eval-definitions';
import type { StartBatchDto } from './start-batch.dto';
import type { BatchPlan } from './start-rules';

/** The validated body as plain definitions, with the spec's defaults applied. */
export function toPlan(body: StartBatchDto): BatchPlan {
  return { suite: toSuite(body.suite), cases: body.cases.map(toCase), variants: body.variants.map(toVariant), trials: body.trials };
}

function toSource(source: SourceDto | null | undefined): EvalSource | null {
  if (!source) return null;
  if (source.kind === 'repo') return { kind: 'repo', url: source.url, ref: source.ref ?? null };
  if (source.kind === 'files') return { kind: 'files', files: { ...source.files } };
  return { kind: 'empty' };
}

export function toSuite(suite: SuiteDto): EvalSuite {
  return { id: suite.id, name: suite.name ?? suite.id, prompt: suite.prompt, source: toSource(suite.source) };
}

function toUser(user: CaseDto['user']): EvalUser | null {
  if (!user) return null;
  if (user.kind === 'scripted') return { kind: 'scripted', replies: [...user.replies] };
  const simulated: EvalUser = { kind: 'simulated', goal: user.goal, prompt: user.prompt };
  if (user.harness !== undefined) simulated.harness = user.harness as never;
  if (user.model !== undefined) simulated.model = user.model;
  return simulated;
}

export function toCase(evalCase: CaseDto): EvalCase {
  return {
    id: evalCase.id,
    name: evalCase.name ?? evalCase.id,
    cache: evalCase.cache ? { key: evalCase.cache.key, path: evalCase.cache.path } : null,
    maxTurns: evalCase.maxTurns ?? null,
    timeoutMs: evalCase.timeoutMs ?? null,
    user: toUser(evalCase.user),
    prepare: evalCase.prepare ? { name: evalCase.prepare.name, source: evalCase.prepare.source } : null,
    source: toSource(evalCase.source),
    tags: [...(evalCase.tags ?? [])],
    variables: { ...(evalCase.variables ?? {}) },
    validator: toValidator(evalCase.validator),
    verify: evalCase.verify ?? null,
  };
}

function toValidator(validator: CaseDto['validator']): Validator | null {
  if (!validator) return null;
  if (validator.kind === 'judge') {
    const judge: Validator = { kind: 'judge', name: validator.name, prompt: validator.prompt };
    if (validator.model !== undefined) judge.model = validator.model;
    if (validator.choices !== undefined) judge.choices = { ...validator.choices };
    if (validator.threshold !== undefined) judge.threshold = validator.threshold;
    if (validator.files !== undefined) judge.files = [...validator.files];
    return judge;
  }
  return {
    name: validator.name,
    source: validator.source,
    capture: validator.capture,
    manifest: validator.manifest?.map((m) => ({ index: m.index, name: m.name })),
    ...(validator.written ? { written: { path: validator.written.path, content: validator.written.content } } : {}),
  };
}

function toProfile(profile: VariantDto['profile']): Profile | null {
  if (!profile) return null;
  const result: Profile = {};
  if (profile.name !== undefined) result.name = profile.name;
  if (profile.install !== undefined) result.install = profile.install;
  if (profile.run !== undefined) result.run = profile.run;
  if (profile.env !== undefined) result.env = { ...profile.env };
  if (profile.files !== undefined) result.files = { ...profile.files };
  if (profile.provider !== undefined) result.provider = profile.provider;
  if (profile.replay !== undefined) result.replay = { batchId: profile.replay.batchId, mode: profile.replay.mode };
  if (profile.budget !== undefined) {
    const { maxModelCalls, maxTokens, maxUsd } = profile.budget;
    result.budget = {
      ...(maxModelCalls === undefined ? {} : { maxModelCalls }),
      ...(maxTokens === undefined ? {} : { maxTokens }),
      ...(maxUsd === undefined ? {} : { maxUsd }),
    };
  }
  return result;
}

export function toVariant(variant: VariantDto): VariantDefinition {
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- a plain copy of the DTO is meant: the class prototype is deliberately dropped
  const credentials = variant.credentials ? { ...variant.credentials } : null;
  return {
    harness: variant.harness as Harness,
    model: variant.model,
    profile: toProfile(variant.profile),
    sandbox: (variant.sandbox as Sandbox | undefined) ?? null,
    credentials: credentials && Object.keys(credentials).length > 0 ? credentials : null,
  };
}
