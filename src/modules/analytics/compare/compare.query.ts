export class CompareVariants {
  constructor(
    readonly organization: string,
    readonly batchIds: string[] | null,
    readonly suiteId: string | null,
    readonly variantKeys: string[] | null,
  ) {}
}
