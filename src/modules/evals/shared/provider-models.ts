/**
 * The models of the model providers configured in ASSAY_CONFIG (what simulated users and LLM
 * judges call), as evals.models.list shows them next to the harness drivers' own. Built where
 * the configuration is read (execution-host.ts) and given to the list through this token.
 */
export interface ProviderModelEntry {
  id: string;
  displayName: string;
  /** The provider's name in the configuration. */
  vendor: string;
  summary: string;
}

export const PROVIDER_MODELS = Symbol('ProviderModels');
