import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { decodeCursor, encodeCursor } from '../audit-cursor';
import { AuditEventView, auditEventView } from '../audit-event.view';
import { readOptions } from '../audit-filters';
import { DEFAULT_AUDIT_LIMIT } from './list-events.dto';
import { ListAuditEvents } from './list-events.query';

export interface AuditEventPage {
  events: AuditEventView[];
  /** Pass it back as `cursor` for the next page; null when this page reached the newest event. */
  next: string | null;
}

/** Reads the log itself, not a read model: the audit shows the events exactly as stored. */
@QueryHandler(ListAuditEvents)
export class ListAuditEventsHandler implements IQueryHandler<ListAuditEvents, AuditEventPage> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ organization, request }: ListAuditEvents): Promise<AuditEventPage> {
    const limit = request.limit ?? DEFAULT_AUDIT_LIMIT;
    const { stream, type, actor, from, to, category } = request;
    const options = readOptions(organization, { stream, type, actor, from, to, categories: category == null ? null : [category] }, limit + 1);
    if (request.cursor != null) options.after = decodeCursor(request.cursor);
    const found = await this.eventStore.readOrganization(options);
    const page = found.slice(0, limit);
    const next = found.length > limit ? encodeCursor(page[page.length - 1].position) : null;
    return { events: page.map(auditEventView), next };
  }
}
