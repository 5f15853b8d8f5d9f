import { Inject, Optional } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { PROVIDER_MODELS, ProviderModelEntry } from '../../shared/provider-models';
import { modelsOf } from '../model-catalogue';
import { ListModels } from './list-models.query';
import { listModels, ModelList } from './model-list';

/**
 * The catalogue is a data file shipped with the service, the one cost estimates price from; the
 * models of the providers in this server's ASSAY_CONFIG follow it (none without a server that
 * runs trials, e.g. a bare module in a test).
 */
@QueryHandler(ListModels)
export class ListModelsHandler implements IQueryHandler<ListModels, ModelList> {
  private readonly providerModels: readonly ProviderModelEntry[];

  constructor(@Optional() @Inject(PROVIDER_MODELS) providerModels?: readonly ProviderModelEntry[]) {
    this.providerModels = providerModels ?? [];
  }

  async execute({ harness, q }: ListModels): Promise<ModelList> {
    return listModels(modelsOf(harness), harness, q, this.providerModels);
  }
}
