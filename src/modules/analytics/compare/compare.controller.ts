import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import type { Comparison } from './comparison';
import { CompareDto } from './compare.dto';
import { CompareVariants } from './compare.query';

@Controller()
export class CompareController {
  constructor(private readonly queryBus: QueryBus) {}

  @Operation('analytics.compare', 'evals:read')
  compare(@Body() body: CompareDto, @CurrentCaller() caller: Caller): Promise<Comparison> {
    return this.queryBus.execute(new CompareVariants(caller.organization, body.batchIds ?? null, body.suiteId ?? null, body.variants ?? null));
  }
}
