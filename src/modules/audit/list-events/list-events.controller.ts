import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { ListAuditEventsDto } from './list-events.dto';
import type { AuditEventPage } from './list-events.handler';
import { ListAuditEvents } from './list-events.query';

@Controller()
export class ListAuditEventsController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The organization's events, oldest first, filtered and paged by log position. */
  @Operation('audit.events.list', 'audit:read')
  list(@Body() body: ListAuditEventsDto, @CurrentCaller() caller: Caller): Promise<AuditEventPage> {
    return this.queryBus.execute(new ListAuditEvents(caller.organization, body));
  }
}
