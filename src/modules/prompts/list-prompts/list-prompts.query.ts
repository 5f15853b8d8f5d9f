export class ListPrompts {
  constructor(readonly organization: string) {}
}
