import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { Public } from '#infrastructure/http/operation.decorator';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';

/** Liveness and readiness probes for orchestrators: plain GETs, no credential. */
@Controller()
export class HealthController {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Inject(READ_STORE) private readonly readStore: ReadStore,
    private readonly projections: ProjectionRunner,
  ) {}

  @Get('health')
  @Public()
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready when both stores answer, the event log's subscription is up (a dropped one is being
   * resumed), and the read models have caught up with the log, whoever projects them (`role`).
   */
  @Get('ready')
  @Public()
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const { eventStore, readStore, projections } = this;
    try {
      const fault = eventStore.subscriptionFault?.() ?? null;
      if (fault !== null) {
        this.notReady(reply, fault);
        return;
      }
      const head = await eventStore.headPosition();
      if (!(await readStore.ping())) {
        this.notReady(reply, 'the read store does not answer');
        return;
      }
      const caughtUp = await projections.waitFor(head, 1000);
      if (!caughtUp) {
        this.notReady(reply, `read models at ${projections.position}, log at ${head}`);
        return;
      }
      // A follower of a shared read store is ready as its owner's checkpoints reach the head.
      void reply.status(200).send({ status: 'ready', position: projections.position, head, role: projections.role });
    } catch (error) {
      this.notReady(reply, (error as Error).message);
    }
  }

  private notReady(reply: FastifyReply, reason: string): void {
    void reply.status(503).send({ status: 'not_ready', reason });
  }
}
