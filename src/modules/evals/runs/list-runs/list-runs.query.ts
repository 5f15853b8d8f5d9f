export class ListRuns {
  constructor(
    readonly organization: string,
    readonly caseId: string,
    readonly variantId: string | null,
    readonly page: number,
  ) {}
}
