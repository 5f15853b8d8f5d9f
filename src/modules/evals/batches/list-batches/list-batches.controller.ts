import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { ListBatchesDto } from './list-batches.dto';
import type { BatchList } from './list-batches.handler';
import { ListBatches } from './list-batches.query';

@Controller()
export class ListBatchesController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The organization's batches (or one suite's), newest first, a page at a time. */
  @Operation('evals.batches.list', 'evals:read')
  list(@Body() body: ListBatchesDto, @CurrentCaller() caller: Caller): Promise<BatchList> {
    return this.queryBus.execute(new ListBatches(caller.organization, body.cursor ?? null, body.limit, body.suite ?? null));
  }
}
