import { variantLabel as sharedVariantLabel } from '#shared/variant-label';
import { canonicalJson, sha256Hex } from '#shared/hash';
import type { VariantDefinition } from '#shared/eval-definitions';
import { profileVersion } from '../evals/shared/identity';

/** What analytics shows of a variant definition: enough to recognize it. */
export interface VariantSummary {
  harness: string;
  model: string;
  /** The hash of the profile's content (its name excluded); null without a profile. */
  profileVersion: string | null;
  /** The profile's name the first time this definition was seen, if it had one. */
  profileName: string | null;
}

export function variantSummary(variant: VariantDefinition): VariantSummary {
  return { harness: variant.harness, model: variant.model, profileVersion: profileVersion(variant.profile), profileName: variant.profile?.name ?? null };
}

/**
 * The variant definition's key: harness, model and profile content, so the same agent set-up is
 * one line across batches, cases and suites (a profile renamed but unchanged is the same one;
 * the sandbox and the simulated user's model are not part of it).
 */
export function variantKey(variant: VariantDefinition): string {
  return `vk_${sha256Hex(canonicalJson([variant.harness, variant.model, profileVersion(variant.profile) ?? ''])).slice(0, 20)}`;
}

/** The shared naming (variant-label.ts); an unnamed profile by the start of its version. */
export function variantLabel(summary: VariantSummary): string {
  const profile = summary.profileName ?? (summary.profileVersion === null ? null : `profile ${summary.profileVersion.slice(0, 8)}`);
  return sharedVariantLabel({ harness: summary.harness, model: summary.model, profile: { name: profile } });
}
