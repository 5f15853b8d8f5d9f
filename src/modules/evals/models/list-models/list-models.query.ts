export class ListModels {
  constructor(
    readonly harness: string,
    readonly q: string,
  ) {}
}
