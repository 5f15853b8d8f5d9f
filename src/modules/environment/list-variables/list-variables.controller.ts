import { Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import type { VariableView } from '../environment.projection';
import { ListVariables } from './list-variables.query';

@Controller()
export class ListVariablesController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The organization's variables by name, with previews: never a value. */
  @Operation('environment.list', 'environment:read')
  list(@CurrentCaller() caller: Caller): Promise<VariableView[]> {
    return this.queryBus.execute(new ListVariables(caller.organization));
  }
}
