import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import { requestMetadata } from '#shared/caller';
import { Conflict, NotFound } from '#shared/errors';
import { derivedEventId } from '#shared/ids';
import { trialResultEvents } from '../../trials/trial-decisions';
import { trialStream } from '../../trials/trial.events';
import { runnerBatch } from '../runner-access';
import type { LocalTrial, RunnerBatch } from '../runner-batch';
import { leaseExpiry, trialRef } from '../runner-decisions';
import { RUNNER_SETTINGS, RunnerSettings } from '../runner-settings';
import { Reported, ReportTrialCommand } from './report-trial.command';

const ATTEMPTS = 5;

/**
 * Records a leased trial's outcome with the events and costs of a server trial, at the trial's
 * revision as read: a void or another report that came first makes it re-read, and then refuse.
 */
@CommandHandler(ReportTrialCommand)
export class ReportTrialHandler implements ICommandHandler<ReportTrialCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Inject(RUNNER_SETTINGS) private readonly settings: RunnerSettings,
  ) {}

  async execute(command: ReportTrialCommand): Promise<Reported> {
    const { batchId, trialId, outcome, context } = command;
    for (let attempt = 1; ; attempt += 1) {
      const batch = await runnerBatch(this.eventStore, batchId, context.caller.organization, true);
      const trial = this.reportable(batch, command);
      const evalCase = batch.started.cases.find((candidate) => candidate.id === trial.run.caseId);
      const { variant } = trial.run;
      const costInput = {
        harness: variant.harness,
        model: variant.model,
        sandbox: variant.sandbox,
        usage: outcome.usage,
        hasSimulatedUser: evalCase?.user?.kind === 'simulated',
        userModel: outcome.userModel ?? null,
      };
      const stream = trialStream(trialId);
      const metadata = requestMetadata(context);
      const events = trialResultEvents(trialRef(batch, trial), outcome, costInput, context.now).map((event, index) => ({
        id: derivedEventId(stream, String(trial.revision), command.leaseId, String(index)),
        ...event,
        metadata,
      }));
      try {
        await this.eventStore.append(stream, events, trial.revision);
        return { id: trialId, status: outcome.status };
      } catch (error) {
        if (!(error instanceof WrongExpectedVersion) || attempt >= ATTEMPTS) throw error;
      }
    }
  }

  private reportable(batch: RunnerBatch, { batchId, trialId, leaseId, context }: ReportTrialCommand): LocalTrial {
    const trial = batch.trials.get(trialId);
    if (!trial) throw new NotFound(`Batch "${batchId}" has no trial "${trialId}" that a runner runs.`);
    if (trial.status === 'done') throw new Conflict(`Trial "${trialId}" already has its result; a trial is reported once.`);
    if (trial.lease?.id !== leaseId) {
      throw new Conflict(`"${leaseId}" is not the current lease of trial "${trialId}": only the runner holding its lease reports it.`);
    }
    if (leaseExpiry(batch, trial.lease, this.settings.leaseMs) < context.now.getTime()) {
      throw new Conflict(`The lease on trial "${trialId}" expired (the runner did not beat in time); the trial will be voided.`);
    }
    return trial;
  }
}
