import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { CostRecord } from '../trials/costs';
import type { Distribution } from '../trials/distribution';

/** Stored in `run-{id}` once every trial of the run has its verdict. */
export type RunFinished = DomainEvent<
  'RunFinished',
  {
    runId: string;
    batchId: string;
    organization: string;
    status: 'finished' | 'failed';
    failure: string | null;
    distribution: Distribution;
    costs: CostRecord;
    finishedAt: string;
  }
>;

export const runStream = (runId: string) => `run-${runId}`;
