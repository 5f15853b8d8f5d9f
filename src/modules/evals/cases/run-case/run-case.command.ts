import type { StartRequest } from '../../batches/batch-starter';

export class RunCase {
  constructor(
    readonly caseId: string,
    readonly trials: number,
    readonly variantIds: string[] | null,
    readonly start: Omit<StartRequest, 'plan'>,
  ) {}
}
