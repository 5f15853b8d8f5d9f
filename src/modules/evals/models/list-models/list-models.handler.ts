import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { modelsOf } from '../model-catalogue';
import { ListModels } from './list-models.query';
import { listModels, ModelList } from './model-list';

/** The catalogue is a data file shipped with the service, the one cost estimates price from. */
@QueryHandler(ListModels)
export class ListModelsHandler implements IQueryHandler<ListModels, ModelList> {
  async execute({ harness, q }: ListModels): Promise<ModelList> {
    return listModels(modelsOf(harness), harness, q);
  }
}
