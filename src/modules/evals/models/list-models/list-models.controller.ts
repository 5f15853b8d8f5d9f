import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { Operation } from '#infrastructure/http/operation.decorator';
import { ListModelsDto } from './list-models.dto';
import { ListModels } from './list-models.query';
import type { ModelList } from './model-list';

@Controller()
export class ListModelsController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The models a variant of the harness can name, from the catalogue shipped with the service. */
  @Operation('evals.models.list', 'evals:read')
  list(@Body() body: ListModelsDto): Promise<ModelList> {
    return this.queryBus.execute(new ListModels(body.harness, body.q));
  }
}
