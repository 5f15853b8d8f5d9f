import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { ListSuitesDto } from './list-suites.dto';
import type { SuiteList } from './list-suites.handler';
import { ListSuites } from './list-suites.query';

@Controller()
export class ListSuitesController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The organization's suites, most recently active first, a page at a time. */
  @Operation('evals.suites.list', 'evals:read')
  list(@Body() body: ListSuitesDto, @CurrentCaller() caller: Caller): Promise<SuiteList> {
    return this.queryBus.execute(new ListSuites(caller.organization, body.cursor ?? null, body.limit));
  }
}
