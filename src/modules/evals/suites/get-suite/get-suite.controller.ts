import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import type { SuiteDetail } from '../suite-view';
import { GetSuiteDto } from './get-suite.dto';
import { GetSuite } from './get-suite.query';

@Controller()
export class GetSuiteController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The suite with its recorded setup and every tag its cases carry. */
  @Operation('evals.suites.get', 'evals:read')
  get(@Body() body: GetSuiteDto, @CurrentCaller() caller: Caller): Promise<SuiteDetail> {
    return this.queryBus.execute(new GetSuite(caller.organization, body.id));
  }
}
