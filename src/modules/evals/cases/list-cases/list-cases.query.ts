import type { Cursor } from '../../shared/cursor';

export interface CaseFilters {
  q: string | null;
  suite: string | null;
  tag: string | null;
}

export class ListCases {
  constructor(
    readonly organization: string,
    readonly filters: CaseFilters,
    readonly cursor: Cursor | null,
    readonly limit: number | undefined,
  ) {}
}
