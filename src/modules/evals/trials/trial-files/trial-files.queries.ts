export class GetTrialDiff {
  constructor(
    readonly organization: string,
    readonly trialId: string,
  ) {}
}

export class GetTrialArtifact {
  constructor(
    readonly organization: string,
    readonly trialId: string,
    readonly path: string,
  ) {}
}
