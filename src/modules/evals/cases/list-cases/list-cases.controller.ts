import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { ListCasesDto } from './list-cases.dto';
import type { CaseList } from './list-cases.handler';
import { ListCases } from './list-cases.query';

@Controller()
export class ListCasesController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The organization's cases by name, filtered by suite, tag and text, with its suites and tags. */
  @Operation('evals.cases.list', 'evals:read')
  list(@Body() body: ListCasesDto, @CurrentCaller() caller: Caller): Promise<CaseList> {
    const filters = { q: body.q || null, suite: body.suite ?? null, tag: body.tag ?? null };
    return this.queryBus.execute(new ListCases(caller.organization, filters, body.cursor ?? null, body.limit));
  }
}
