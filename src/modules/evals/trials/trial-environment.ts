import type { VariantDefinition } from '#shared/eval-definitions';

/** The environment a trial's processes get, and the values that must never be captured. */
export interface ResolvedTrialEnvironment {
  env: Record<string, string>;
  secrets: string[];
  /** The connections whose values are in `env`: what `recordUse` records. */
  connectionIds?: string[];
  /** The organization variables in `env`. */
  variableNames?: string[];
  /** Model provider API keys by provider name (for the simulated user and judges); also in `secrets`. */
  providerKeys?: Record<string, string>;
  /** The connection each of those keys came from, by integration. */
  providerConnections?: Record<string, string>;
}

/** How a trial went, as far as its credentials are concerned. */
export interface TrialUseOutcome {
  /** The trial's driver detected that it failed to authenticate: the connections become invalid. */
  authFailed: boolean;
  trialId?: string;
  /** The variables the trial got (`variableNames` of the resolution), to set their lastUsedAt. */
  variableNames?: readonly string[];
}

/**
 * Gives trials the organization's variables and the variant's connector values. Values are
 * decrypted only here, inside the trial runner's process, never stored in an event.
 */
export interface TrialEnvironment {
  /**
   * `requester` is who started the batch (the actor id in the BatchStarted event's metadata): a
   * personal connection is given only to its owner's trials.
   */
  resolve(
    organization: string,
    variant: VariantDefinition,
    requester?: string,
    options?: { providerIntegrations?: readonly string[] },
  ): Promise<ResolvedTrialEnvironment>;
  /** The organization's model-provider keys alone (a rescore's judge needs nothing else), by integration. */
  providerKeys?(
    organization: string,
    integrations: readonly string[],
  ): Promise<{ keys: Record<string, string>; connectionIds: string[]; byIntegration?: Record<string, string> }>;
  /** Records the use (lastUsedAt) and, on an authentication failure, marks connections invalid. Never throws. */
  recordUse?(organization: string, connectionIds: readonly string[], outcome: TrialUseOutcome): Promise<void>;
}

/** The TrialEnvironment the orchestration gives trials (ConnectorsModule provides TrialSecrets). */
export const TRIAL_ENVIRONMENT = Symbol('TrialEnvironment');
