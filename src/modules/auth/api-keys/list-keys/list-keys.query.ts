export class ListApiKeys {
  constructor(readonly organization: string) {}
}
