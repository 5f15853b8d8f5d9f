import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { requestMetadata } from '#shared/caller';
import { Conflict } from '#shared/errors';
import { runByRunner } from '../../batches/local-runs';
import { runnerBatch } from '../runner-access';
import { RUNNER_SETTINGS, RunnerSettings } from '../runner-settings';
import { appendRunnerEvent, releaseRunnerSlot, voidUnreported } from '../runner-writes';
import { CANCELLED_FAILURE, UNREPORTED_FAILURE } from '../runner.events';
import { FinishedByRunner, FinishLocalBatchCommand } from './finish-local-batch.command';

const ATTEMPTS = 5;

/**
 * RunnerFinished, then every unreported trial void; the saga then finishes the runs and the
 * batch as usual (a cancelled batch as failed, "cancelled"). A batch whose runs are all the runner's gives its slot back here, so the
 * runner's next start is not refused while the saga catches up. Finishing again answers the
 * first finish: a runner that lost the answer may retry.
 */
@CommandHandler(FinishLocalBatchCommand)
export class FinishLocalBatchHandler implements ICommandHandler<FinishLocalBatchCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Inject(RUNNER_SETTINGS) private readonly settings: RunnerSettings,
  ) {}

  async execute({ batchId, cancelled, context }: FinishLocalBatchCommand): Promise<FinishedByRunner> {
    const metadata = requestMetadata(context);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const batch = await runnerBatch(this.eventStore, batchId, context.caller.organization, false);
      if (batch.runner === 'silenced') {
        throw new Conflict(`Batch "${batchId}" failed: its runner stopped checking in, and its unreported trials were voided.`);
      }
      if (batch.runner === 'finished') return { id: batchId, cancelled: batch.cancelled, voided: 0 };
      const { organization } = batch.started;
      const event = { type: 'RunnerFinished' as const, data: { batchId, organization, at: context.now.toISOString(), cancelled } };
      if (!(await appendRunnerEvent(this.eventStore, batch, event, metadata))) continue;
      const failure = cancelled ? CANCELLED_FAILURE : UNREPORTED_FAILURE;
      const voided = await voidUnreported(this.eventStore, batchId, failure, context.now, { leaseMs: this.settings.leaseMs, metadata });
      if (batch.started.runs.every(runByRunner)) await releaseRunnerSlot(this.eventStore, batch, 'the runner finished', context.now, metadata);
      return { id: batchId, cancelled, voided };
    }
    throw new Conflict(`Batch "${batchId}" is being changed by another request at the same time. Retry.`);
  }
}
