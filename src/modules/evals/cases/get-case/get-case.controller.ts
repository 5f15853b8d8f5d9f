import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import type { CaseDetail } from '../case-view';
import { GetCaseDto } from './get-case.dto';
import { GetCase } from './get-case.query';

@Controller()
export class GetCaseController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The case with its newest setup, its variants (whose ids `evals.cases.run` takes) and its versions. */
  @Operation('evals.cases.get', 'evals:read')
  get(@Body() body: GetCaseDto, @CurrentCaller() caller: Caller): Promise<CaseDetail> {
    return this.queryBus.execute(new GetCase(caller.organization, body.id));
  }
}
