export class ListPromptVersions {
  constructor(
    readonly organization: string,
    readonly promptId: string,
  ) {}
}
