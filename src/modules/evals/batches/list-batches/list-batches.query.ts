import type { Cursor } from '../../shared/cursor';

export class ListBatches {
  constructor(
    readonly organization: string,
    readonly cursor: Cursor | null,
    readonly limit: number | undefined,
  ) {}
}
