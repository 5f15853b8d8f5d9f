import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import type { ChainReport } from './verify-chain.handler';
import { VerifyAuditChain } from './verify-chain.query';

/** `{}`: strict, so that a filter sent by mistake is refused rather than ignored. */
@ForbidUnknownProperties()
export class VerifyAuditChainDto {}

@Controller()
export class VerifyAuditChainController {
  constructor(private readonly queryBus: QueryBus) {}

  /** Recomputes the organization's hash chain and answers its first break, if any. */
  @Operation('audit.verify', 'audit:read')
  verify(@Body() _body: VerifyAuditChainDto, @CurrentCaller() caller: Caller): Promise<ChainReport> {
    return this.queryBus.execute(new VerifyAuditChain(caller.organization));
  }
}
