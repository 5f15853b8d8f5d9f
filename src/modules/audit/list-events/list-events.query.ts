import type { ListAuditEventsDto } from './list-events.dto';

export class ListAuditEvents {
  constructor(
    readonly organization: string,
    readonly request: ListAuditEventsDto,
  ) {}
}
