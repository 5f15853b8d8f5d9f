import { Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { ListApiKeys } from './list-keys.query';
import type { ApiKeySummary } from './list-keys.handler';

@Controller()
export class ListKeysController {
  constructor(private readonly queryBus: QueryBus) {}

  @Operation('auth.keys.list', 'keys:admin')
  list(@CurrentCaller() caller: Caller): Promise<{ keys: ApiKeySummary[] }> {
    return this.queryBus.execute(new ListApiKeys(caller.organization));
  }
}
