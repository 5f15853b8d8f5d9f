import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { GetByIdDto } from '../../shared/get-by-id.dto';
import type { RunView } from '../run-view';
import { GetRun } from './get-run.query';

@Controller()
export class GetRunController {
  constructor(private readonly queryBus: QueryBus) {}

  @Operation('evals.runs.get', 'evals:read')
  get(@Body() body: GetByIdDto, @CurrentCaller() caller: Caller): Promise<RunView> {
    return this.queryBus.execute(new GetRun(caller.organization, body.id));
  }
}
