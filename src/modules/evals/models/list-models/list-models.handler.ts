import { Inject, Optional } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { HARNESS_AGENTS, HarnessAgentEntry, PROVIDER_MODELS, ProviderModelEntry } from '../../shared/provider-models';
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

  private readonly harnessAgents: readonly HarnessAgentEntry[];

  constructor(
    @Optional() @Inject(PROVIDER_MODELS) providerModels?: readonly ProviderModelEntry[],
    @Optional() @Inject(HARNESS_AGENTS) harnessAgents?: readonly HarnessAgentEntry[],
  ) {
    this.providerModels = providerModels ?? [];
    this.harnessAgents = harnessAgents ?? [];
  }

  async execute({ harness, q }: ListModels): Promise<ModelList> {
    const list = listModels(modelsOf(harness), harness, q, this.providerModels);
    const entry = this.harnessAgents.find((candidate) => candidate.harness === harness);
    // The harness's built-in agent, when this server runs it with one: its name and the version its trials install.
    const agent =
      entry === undefined
        ? null
        : { name: entry.agent, version: entry.version, pinnedVersion: entry.pinnedVersion, package: entry.packageName, provider: entry.provider };
    return { ...list, agent };
  }
}
