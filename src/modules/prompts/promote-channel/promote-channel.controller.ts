import { Body, Controller } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../shared/caller';
import { PromotePromptChannel } from './promote-channel.command';
import { PromoteChannelDto } from './promote-channel.dto';

@Controller()
export class PromoteChannelController {
  constructor(private readonly commandBus: CommandBus) {}

  /** Points a channel at a version: callers reading the channel get it from this answer on. */
  @Operation('prompts.promote', 'prompts:write')
  promote(@Body() body: PromoteChannelDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    return this.commandBus.execute(new PromotePromptChannel(body.id, body.channel, body.version, { caller, correlationId, now: new Date() }));
  }
}
