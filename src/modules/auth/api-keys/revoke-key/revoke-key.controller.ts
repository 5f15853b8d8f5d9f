import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { RevokeApiKeyCommand } from './revoke-key.command';
import { RevokeKeyDto } from './revoke-key.dto';

@Controller()
export class RevokeKeyController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** A revoked key is refused from the moment this answers. */
  @Operation('auth.keys.revoke', 'keys:admin')
  revoke(@Body() body: RevokeKeyDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    const now = this.clock.now();
    const revoke = { type: 'RevokeApiKey' as const, keyId: body.id, organization: caller.organization, now };
    return this.commandBus.execute(new RevokeApiKeyCommand(revoke, { caller, correlationId, now }));
  }
}
