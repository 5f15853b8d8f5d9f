import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';

export interface FinishedByRunner {
  id: string;
  cancelled: boolean;
  /** The trials this finish voided (none when every trial was reported, or on a repeated finish). */
  voided: number;
}

/** runner.batches.finish: the runner is done; what it did not report is void. */
export class FinishLocalBatchCommand extends Command<FinishedByRunner> {
  constructor(
    readonly batchId: string,
    readonly cancelled: boolean,
    readonly context: CommandContext,
  ) {
    super();
  }
}
