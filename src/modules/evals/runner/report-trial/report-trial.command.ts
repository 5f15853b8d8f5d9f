import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { TrialOutcome } from '#trial-runner';

export interface Reported {
  id: string;
  status: 'passed' | 'failed' | 'void';
}

/** runner.trials.report: the outcome of a trial the caller leased. */
export class ReportTrialCommand extends Command<Reported> {
  constructor(
    readonly batchId: string,
    readonly trialId: string,
    readonly leaseId: string,
    readonly outcome: TrialOutcome,
    readonly context: CommandContext,
  ) {
    super();
  }
}
