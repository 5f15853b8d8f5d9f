import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { ListRunsDto } from './list-runs.dto';
import type { RunPage } from './list-runs.handler';
import { ListRuns } from './list-runs.query';

@Controller()
export class ListRunsController {
  constructor(private readonly queryBus: QueryBus) {}

  /** A case's runs on a variant, newest first, by page number. */
  @Operation('evals.runs.list', 'evals:read')
  list(@Body() body: ListRunsDto, @CurrentCaller() caller: Caller): Promise<RunPage> {
    return this.queryBus.execute(new ListRuns(caller.organization, body.caseId, body.variant ?? null, body.page));
  }
}
