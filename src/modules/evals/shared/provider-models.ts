import type { ProviderModelEntry } from '#trial-runner';

export type { ProviderModelEntry };

/** The configured providers' models (ProviderModelEntry), given to evals.models.list through this token. */
export const PROVIDER_MODELS = Symbol('ProviderModels');
