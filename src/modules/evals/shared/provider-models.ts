import type { HarnessAgentEntry, ProviderModelEntry } from '#trial-runner';

export type { HarnessAgentEntry, ProviderModelEntry };

/** The configured providers' models (ProviderModelEntry), given to evals.models.list through this token. */
export const PROVIDER_MODELS = Symbol('ProviderModels');

/** The harness kinds run by a built-in agent (HarnessAgentEntry), given to evals.models.list through this token. */
export const HARNESS_AGENTS = Symbol('HarnessAgents');
