import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { ModelCallsDto } from './model-calls.dto';
import type { ModelCallView } from './model-calls.handler';
import { ListModelCalls } from './model-calls.query';

@Controller()
export class ModelCallsController {
  constructor(private readonly queryBus: QueryBus) {}

  @Operation('evals.trials.modelCalls', 'evals:read')
  list(@Body() body: ModelCallsDto, @CurrentCaller() caller: Caller): Promise<{ calls: ModelCallView[] }> {
    return this.queryBus.execute(new ListModelCalls(caller.organization, body.trialId));
  }
}
