export class ListModelCalls {
  constructor(
    readonly organization: string,
    readonly trialId: string,
  ) {}
}
