import { Controller, Inject, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { CurrentCaller, GetOperation } from '#infrastructure/http/operation.decorator';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import type { Caller } from '#shared/caller';
import { BadRequest, NotFound } from '#shared/errors';
import { GetByIdDto } from '../../shared/get-by-id.dto';
import { batchStream } from '../batch.events';
import { BatchWatches } from './batch-watches';
import { progressStream } from './progress-stream';

@Controller()
export class WatchBatchController {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    private readonly watches: BatchWatches,
    private readonly logger: JsonLogger,
  ) {}

  /**
   * The batch's progress as Server-Sent Events until it ends. Every refusal (bad id, another
   * organization's batch, too many streams) answers in the error shape before the stream starts.
   */
  @GetOperation('evals.batches.watch', 'evals:read')
  async watch(@Query() query: GetByIdDto, @Req() request: FastifyRequest, @Res() reply: FastifyReply, @CurrentCaller() caller: Caller): Promise<void> {
    const resumeAfter = lastEventId(request.headers['last-event-id']);
    const batch = await this.findBatch(caller.organization, query.id);
    const release = this.watches.take(caller.organization);
    const after = resumeAfter ?? batch.startedAt - 1;
    const onClose = () => {
      untrack();
      release();
    };
    const { body, close } = progressStream({ eventStore: this.eventStore, logger: this.logger, batchId: query.id, after, onClose });
    const untrack = this.watches.track(close);
    // The client went away: its subscription and its place are freed at once.
    reply.raw.once('close', close);
    void reply
      .status(200)
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      .send(body);
    // Resumed after the batch's last event: nothing is left to send.
    if (batch.endedAt !== null && after >= batch.endedAt) close();
  }

  /** The batch's start and end positions, from its own stream; 404 unless it is the caller's organization's. */
  private async findBatch(organization: string, batchId: string): Promise<{ startedAt: number; endedAt: number | null }> {
    const events = await this.eventStore.readStream(batchStream(batchId));
    const started = events.find((event) => event.type === 'BatchStarted');
    if (!started || (started.data as { organization?: string }).organization !== organization) {
      throw new NotFound(`Batch "${batchId}" does not exist.`);
    }
    const ended = events.find((event) => event.type === 'BatchFinished' || event.type === 'BatchFailed');
    return { startedAt: started.position, endedAt: ended?.position ?? null };
  }
}

/** The position a reconnecting client saw last (`Last-Event-ID`), or null for a first connection. */
function lastEventId(header: string | string[] | undefined): number | null {
  if (header === undefined || header === '') return null;
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header.trim())) {
    throw new BadRequest('Last-Event-ID must be the id of an event this stream sent (a whole number).');
  }
  return Number(header.trim());
}
