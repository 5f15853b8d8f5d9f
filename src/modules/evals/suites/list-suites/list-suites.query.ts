import type { Cursor } from '../../shared/cursor';

export class ListSuites {
  constructor(
    readonly organization: string,
    readonly cursor: Cursor | null,
    readonly limit: number | undefined,
  ) {}
}
