import { Command } from '@nestjs/cqrs';
import type { CommandContext } from '#shared/caller';

export interface Beaten {
  /** When the leases end now, unless the runner beats again. */
  expiresAt: string;
  leases: Array<{ trialId: string; id: string; expiresAt: string }>;
}

/** runner.beat: the runner is alive; its leases run on. */
export class BeatCommand extends Command<Beaten> {
  constructor(
    readonly batchId: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}
