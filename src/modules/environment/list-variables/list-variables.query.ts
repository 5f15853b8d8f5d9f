export class ListVariables {
  constructor(readonly organization: string) {}
}
