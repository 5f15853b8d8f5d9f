export class GetPromptsSnapshot {
  constructor(
    readonly organization: string,
    /** ISO-8601 UTC with milliseconds. */
    readonly at: string,
  ) {}
}
