export class ListFlaky {
  constructor(
    readonly organization: string,
    readonly suiteId: string | null,
    readonly limit: number,
  ) {}
}
