export class GetPromptHistory {
  constructor(
    readonly organization: string,
    readonly promptId: string,
    /** Only this channel's moves; `latest` moves with every append. Null: everything. */
    readonly channel: string | null,
  ) {}
}
