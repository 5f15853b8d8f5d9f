export class GetBatch {
  constructor(
    readonly organization: string,
    readonly batchId: string,
  ) {}
}
