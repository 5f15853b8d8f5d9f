import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';
import type { TrialSpec } from '#trial-runner';

export interface LeasedTrial {
  id: string;
  runId: string;
  caseId: string;
  variantId: string;
  ordinal: number;
  lease: { id: string; expiresAt: string };
  spec: TrialSpec;
}

export interface Leased {
  trials: LeasedTrial[];
  /** Trials of the runner's runs that no runner holds yet: lease again until none is left. */
  remaining: number;
  /** The server's output cap: the runner captures no more per command, as the server's runner would. */
  outputCapBytes: number;
}

/** runner.trials.lease: hands out up to `max` queued trials of the runner's runs. */
export class LeaseTrialsCommand extends Command<Leased> {
  constructor(
    readonly batchId: string,
    readonly max: number,
    readonly context: CommandContext,
  ) {
    super();
  }
}
