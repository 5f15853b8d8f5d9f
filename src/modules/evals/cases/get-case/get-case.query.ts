export class GetCase {
  constructor(
    readonly organization: string,
    readonly caseId: string,
  ) {}
}
