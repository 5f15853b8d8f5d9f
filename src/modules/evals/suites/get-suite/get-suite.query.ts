export class GetSuite {
  constructor(
    readonly organization: string,
    readonly suiteId: string,
  ) {}
}
