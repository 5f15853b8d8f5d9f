import { Module } from '@nestjs/common';
import { ExportAuditEventsController } from './export-events/export-events.controller';
import { ListAuditEventsController } from './list-events/list-events.controller';
import { ListAuditEventsHandler } from './list-events/list-events.handler';
import { VerifyAuditChainController } from './verify-chain/verify-chain.controller';
import { VerifyAuditChainHandler } from './verify-chain/verify-chain.handler';

/** The audit: the organization's events as stored, their export, and their hash chain. */
@Module({
  controllers: [ListAuditEventsController, ExportAuditEventsController, VerifyAuditChainController],
  providers: [ListAuditEventsHandler, VerifyAuditChainHandler],
})
export class AuditModule {}
