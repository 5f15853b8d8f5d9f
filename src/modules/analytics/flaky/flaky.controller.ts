import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { FlakyDto } from './flaky.dto';
import type { FlakyCases } from './flaky.handler';
import { ListFlaky } from './flaky.query';

@Controller()
export class FlakyController {
  constructor(private readonly queryBus: QueryBus) {}

  @Operation('analytics.flaky', 'evals:read')
  flaky(@Body() body: FlakyDto, @CurrentCaller() caller: Caller): Promise<FlakyCases> {
    return this.queryBus.execute(new ListFlaky(caller.organization, body.suiteId ?? null, body.limit));
  }
}
