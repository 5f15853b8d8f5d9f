export class GetRun {
  constructor(
    readonly organization: string,
    readonly runId: string,
  ) {}
}
