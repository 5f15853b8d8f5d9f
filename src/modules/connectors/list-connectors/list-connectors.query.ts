export class ListConnectors {
  constructor(
    readonly organization: string,
    /** The caller: personal connections are listed to their owner only. */
    readonly actor: string,
  ) {}
}
