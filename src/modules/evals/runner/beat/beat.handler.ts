import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { requestMetadata } from '#shared/caller';
import { Conflict } from '#shared/errors';
import { runnerBatch } from '../runner-access';
import { leaseExpiry } from '../runner-decisions';
import { RUNNER_SETTINGS, RunnerSettings } from '../runner-settings';
import { appendRunnerEvent } from '../runner-writes';
import { BeatCommand, Beaten } from './beat.command';

const ATTEMPTS = 5;

/** Records RunnerBeat at the runner stream's revision, so a silencing decided meanwhile wins or loses cleanly. */
@CommandHandler(BeatCommand)
export class BeatHandler implements ICommandHandler<BeatCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Inject(RUNNER_SETTINGS) private readonly settings: RunnerSettings,
  ) {}

  async execute({ batchId, context }: BeatCommand): Promise<Beaten> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const batch = await runnerBatch(this.eventStore, batchId, context.caller.organization, true);
      const { organization } = batch.started;
      const at = context.now.toISOString();
      if (await appendRunnerEvent(this.eventStore, batch, { type: 'RunnerBeat', data: { batchId, organization, at } }, requestMetadata(context))) {
        batch.beats = [...batch.beats, context.now.getTime()];
        const leases = [...batch.trials.values()].flatMap((trial) => {
          if (trial.status !== 'leased' || trial.lease === null) return [];
          const expires = leaseExpiry(batch, trial.lease, this.settings.leaseMs);
          return expires < context.now.getTime() ? [] : [{ trialId: trial.trialId, id: trial.lease.id, expiresAt: new Date(expires).toISOString() }];
        });
        return { expiresAt: new Date(context.now.getTime() + this.settings.leaseMs).toISOString(), leases };
      }
    }
    throw new Conflict(`Batch "${batchId}" is being changed by another request at the same time. Retry.`);
  }
}
