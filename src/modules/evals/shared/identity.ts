import { canonicalJson, sha256Hex } from '#shared/hash';
import type { EvalCase, EvalSource, EvalSuite, Profile, VariantDefinition } from '#shared/eval-definitions';
import { validatorText } from '#shared/eval-definitions';

import { renderPrompt } from '#shared/eval-definitions';

export { placeholders, renderPrompt } from '#shared/eval-definitions';

export function describeSource(source: EvalSource | null): string {
  if (!source || source.kind === 'empty') return 'empty';
  if (source.kind === 'repo') return `repo ${source.url} ${source.ref ?? ''}`;
  const files = Object.keys(source.files)
    .sort()
    .map((path) => `${path}\u0000${source.files[path]}`);
  return ['files', ...files].join(' ');
}

/** The parts of a case's definition, each named as `changes` names it. */
export function definitionParts(suite: EvalSuite, evalCase: EvalCase): Array<[string, string]> {
  const parts: Array<[string, string]> = [
    ['prompt', renderPrompt(suite.prompt, evalCase.variables)],
    ['setup', evalCase.prepare?.source ?? ''],
    ['validator', validatorText(evalCase.validator) ?? ''],
    ['verifier', evalCase.verify ?? ''],
    ['source', describeSource(evalCase.source ?? suite.source)],
    ['simulated user', evalCase.user ? canonicalJson(evalCase.user) : ''],
    ['cache', evalCase.cache ? `${evalCase.cache.key} ${evalCase.cache.path}` : ''],
  ];
  if (evalCase.maxTurns !== null || evalCase.timeoutMs !== null) {
    parts.push(['limits', `limits ${evalCase.maxTurns ?? ''} ${evalCase.timeoutMs ?? ''}`]);
  }
  return parts;
}

/** SHA-256 (hex, first 32 characters) over the definition's parts joined by NUL. */
export function definitionHash(parts: Array<[string, string]>): string {
  return sha256Hex(parts.map(([, value]) => value).join('\u0000')).slice(0, 32);
}

/** The names of the parts that differ between two versions (`limits` when only they changed). */
export function changedParts(previous: Array<[string, string]>, next: Array<[string, string]>): string[] {
  const before = new Map(previous);
  const after = new Map(next);
  const names = [...new Set([...before.keys(), ...after.keys()])];
  return names.filter((name) => (before.get(name) ?? '') !== (after.get(name) ?? ''));
}

/** A hash of the profile's content, its name excluded. */
export function profileVersion(profile: Profile | null): string | null {
  if (!profile) return null;
  const { name: _name, ...content } = profile;
  return sha256Hex(canonicalJson(content)).slice(0, 16);
}

/** A named profile is itself; an unnamed one is its content. */
function profileIdentity(profile: Profile | null): string {
  if (!profile) return '';
  return profile.name !== undefined ? `name:${profile.name}` : `content:${profileVersion(profile)}`;
}

/** (harness, model, sandbox, profile identity, user model): what makes two variants the same. */
export function variantIdentity(variant: VariantDefinition, userModel: string | null): string {
  return canonicalJson([variant.harness, variant.model, variant.sandbox ?? '', profileIdentity(variant.profile), userModel ?? '']);
}

/** Stable for a case and an identity, so re-running a case on the same combination reuses it. */
export function variantId(organization: string, caseId: string, identity: string): string {
  return `var_${sha256Hex(`${organization}\u0000${caseId}\u0000${identity}`).slice(0, 24)}`;
}
