import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import { requestMetadata } from '#shared/caller';
import { derivedEventId, newId } from '#shared/ids';
import { trialSpec } from '../../trials/trial-decisions';
import { trialStream } from '../../trials/trial.events';
import { runnerBatch } from '../runner-access';
import type { LocalTrial, RunnerBatch } from '../runner-batch';
import { leasableTrials, leaseEvents, remainingTrials } from '../runner-decisions';
import { RUNNER_SETTINGS, RunnerSettings } from '../runner-settings';
import { Leased, LeasedTrial, LeaseTrialsCommand } from './lease-trials.command';

/**
 * Each trial is leased by appending TrialStarted and TrialLeased at the revision of its
 * TrialQueued: of two runners leasing at once, one gets it and the other skips it.
 */
@CommandHandler(LeaseTrialsCommand)
export class LeaseTrialsHandler implements ICommandHandler<LeaseTrialsCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Inject(RUNNER_SETTINGS) private readonly settings: RunnerSettings,
  ) {}

  async execute({ batchId, max, context }: LeaseTrialsCommand): Promise<Leased> {
    const batch = await runnerBatch(this.eventStore, batchId, context.caller.organization, true);
    const trials: LeasedTrial[] = [];
    for (const trial of leasableTrials(batch, max)) {
      const leased = await this.lease(batch, trial, context.now, requestMetadata(context));
      if (leased) trials.push(leased);
    }
    return { trials, remaining: remainingTrials(batch) - trials.length, outputCapBytes: this.settings.outputCapBytes };
  }

  private async lease(batch: RunnerBatch, trial: LocalTrial, now: Date, metadata: ReturnType<typeof requestMetadata>): Promise<LeasedTrial | null> {
    const leaseId = newId('lse', now.getTime());
    const events = leaseEvents(batch, trial, leaseId, now, this.settings.leaseMs);
    const stream = trialStream(trial.trialId);
    try {
      await this.eventStore.append(
        stream,
        events.map((event, index) => ({ id: derivedEventId(stream, String(trial.revision), leaseId, String(index)), ...event, metadata })),
        trial.revision,
      );
    } catch (error) {
      if (error instanceof WrongExpectedVersion) return null;
      throw error;
    }
    const { run } = trial;
    // The organization's variables, connector values and provider keys stay on the server.
    const spec = trialSpec(batch.started, run, trial.trialId, { env: {}, secrets: [], providerKeys: {} });
    const expiresAt = new Date(now.getTime() + this.settings.leaseMs).toISOString();
    return {
      id: trial.trialId,
      runId: run.runId,
      caseId: run.caseId,
      variantId: run.variantId,
      ordinal: trial.ordinal,
      lease: { id: leaseId, expiresAt },
      spec,
    };
  }
}
