import type { Cursor } from '../../shared/cursor';

export class ListBatches {
  constructor(
    readonly organization: string,
    readonly cursor: Cursor | null,
    readonly limit: number | undefined,
    /** A suite id: that suite's batches only; null for all. */
    readonly suite: string | null = null,
  ) {}
}
