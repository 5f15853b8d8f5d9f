import { Body, Controller } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../../shared/caller';
import { CreateApiKey } from './create-key.command';
import { CreateKeyDto } from './create-key.dto';
import type { CreatedApiKey } from './create-key.handler';

@Controller()
export class CreateKeyController {
  constructor(private readonly commandBus: CommandBus) {}

  /** The key is in this answer only: it is stored as a hash and cannot be shown again. */
  @Operation('auth.keys.create', 'keys:admin')
  create(@Body() body: CreateKeyDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<CreatedApiKey> {
    return this.commandBus.execute(new CreateApiKey(body.name, body.permissions, { caller, correlationId, now: new Date() }));
  }
}
