import type { VariantDefinition } from '../shared/definitions';

/** The environment a trial's processes get, and the values that must never be captured. */
export interface ResolvedTrialEnvironment {
  env: Record<string, string>;
  secrets: string[];
}

/**
 * Gives trials the organization's variables and the variant's connector values. Values are
 * decrypted only here, inside the trial runner's process, never stored in an event.
 */
export interface TrialEnvironment {
  resolve(organization: string, variant: VariantDefinition): Promise<ResolvedTrialEnvironment>;
}

/** Until variables and connectors are configured, trials get no extra environment. */
export const emptyTrialEnvironment: TrialEnvironment = {
  resolve: async () => ({ env: {}, secrets: [] }),
};
