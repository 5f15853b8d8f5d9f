import catalogue from './model-catalogue.json';

export interface ModelPrices {
  inputPerMillionUsd: number;
  outputPerMillionUsd: number;
  cacheReadPerMillionUsd: number;
  cacheWritePerMillionUsd: number;
}

export interface CatalogueModel {
  id: string;
  displayName: string;
  vendor: string;
  summary: string;
  releasedAt: string;
  prices: ModelPrices;
}

const byHarness = (catalogue as { harnesses: Record<string, CatalogueModel[]> }).harnesses;

/** The models a harness can name, from the shipped data file. `command` has none. */
export function modelsOf(harness: string): readonly CatalogueModel[] {
  return byHarness[harness] ?? [];
}

export function findModel(harness: string, modelId: string): CatalogueModel | null {
  return modelsOf(harness).find((model) => model.id === modelId) ?? null;
}
