import { Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import { actorOf, Caller } from '#shared/caller';
import type { ConnectionView } from '../connection.projection';
import { ListConnectors } from './list-connectors.query';

@Controller()
export class ListConnectorsController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The organization's connections and the caller's personal ones, newest first, without values. */
  @Operation('connectors.list', 'connectors:read')
  list(@CurrentCaller() caller: Caller): Promise<ConnectionView[]> {
    return this.queryBus.execute(new ListConnectors(caller.organization, actorOf(caller)));
  }
}
