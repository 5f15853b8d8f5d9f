import { Readable } from 'node:stream';
import { Body, Controller, Inject, StreamableFile } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { readOptions } from '../audit-filters';
import { ExportAuditEventsDto } from './export-events.dto';
import { exportLines } from './ndjson-export';

@Controller()
export class ExportAuditEventsController {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  /** The organization's events as NDJSON, streamed, ending with the count and the chain hash. */
  @Operation('audit.events.export', 'audit:read')
  export(@Body() body: ExportAuditEventsDto, @CurrentCaller() caller: Caller): StreamableFile {
    // Filters are checked before the first byte, so a bad request still gets its 400.
    const options = readOptions(caller.organization, body, 0);
    return new StreamableFile(Readable.from(exportLines(this.eventStore, options)), { type: 'application/x-ndjson' });
  }
}
