export class VerifyAuditChain {
  constructor(readonly organization: string) {}
}
