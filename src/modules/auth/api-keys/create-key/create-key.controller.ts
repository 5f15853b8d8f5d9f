import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { CreateApiKeyCommand, CreatedApiKey } from './create-key.command';
import { CreateKeyDto } from './create-key.dto';

@Controller()
export class CreateKeyController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The key is in this answer only: it is stored as a hash and cannot be shown again. */
  @Operation('auth.keys.create', 'keys:admin')
  create(@Body() body: CreateKeyDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<CreatedApiKey> {
    const now = this.clock.now();
    const issue = { type: 'IssueApiKey' as const, organization: caller.organization, name: body.name, permissions: body.permissions, now };
    return this.commandBus.execute(new CreateApiKeyCommand(issue, { caller, correlationId, now }));
  }
}
