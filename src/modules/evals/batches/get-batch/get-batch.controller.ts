import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { GetByIdDto } from '../../shared/get-by-id.dto';
import type { BatchView } from './get-batch.handler';
import { GetBatch } from './get-batch.query';

@Controller()
export class GetBatchController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The batch with its runs and their trials; poll it until the status is finished or failed. */
  @Operation('evals.batches.get', 'evals:read')
  get(@Body() body: GetByIdDto, @CurrentCaller() caller: Caller): Promise<BatchView> {
    return this.queryBus.execute(new GetBatch(caller.organization, body.id));
  }
}
