import { Body, Controller } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../../shared/caller';
import { RevokeApiKey } from './revoke-key.command';
import { RevokeKeyDto } from './revoke-key.dto';

@Controller()
export class RevokeKeyController {
  constructor(private readonly commandBus: CommandBus) {}

  /** A revoked key is refused from the moment this answers. */
  @Operation('auth.keys.revoke', 'keys:admin')
  revoke(@Body() body: RevokeKeyDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    return this.commandBus.execute(new RevokeApiKey(body.id, { caller, correlationId, now: new Date() }));
  }
}
