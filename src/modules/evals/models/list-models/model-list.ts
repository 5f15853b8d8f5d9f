import type { ProviderModelEntry } from '../../shared/provider-models';
import type { CatalogueModel } from '../model-catalogue';

export const MAX_MODELS = 20;

/** The model entry of the spec. */
export interface ModelEntry {
  displayName: string;
  id: string;
  summary: string;
  vendor: string;
}

export interface ModelList {
  harness: string;
  models: ModelEntry[];
  total: number;
  /** The harness's built-in agent on this server (ASSAY_CONFIG harnesses.<kind>.agent); null: none, or not answered yet. */
  agent?: { name: string; version: string; pinnedVersion: string; package: string; provider: string | null } | null;
}

/** By vendor, then newest first (release date descending), then by id for a stable order. */
function byVendorThenNewest(a: CatalogueModel, b: CatalogueModel): number {
  if (a.vendor !== b.vendor) return a.vendor < b.vendor ? -1 : 1;
  if (a.releasedAt !== b.releasedAt) return a.releasedAt < b.releasedAt ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The models of a harness whose id or display name holds `q` (case-insensitive), then the
 * configured providers' that match, in configuration order: at most 20 of them, with `total`
 * counting every match.
 */
export function listModels(models: readonly CatalogueModel[], harness: string, q: string, providerModels: readonly ProviderModelEntry[] = []): ModelList {
  const needle = q.toLowerCase();
  const matching = (model: ModelEntry) => model.id.toLowerCase().includes(needle) || model.displayName.toLowerCase().includes(needle);
  const matches = [...models.filter(matching).sort(byVendorThenNewest), ...providerModels.filter(matching)];
  return {
    harness,
    models: matches.slice(0, MAX_MODELS).map(({ displayName, id, summary, vendor }) => ({ displayName, id, summary, vendor })),
    total: matches.length,
  };
}
