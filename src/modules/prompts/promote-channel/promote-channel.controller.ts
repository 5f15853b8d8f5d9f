import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../infrastructure/http/operation.decorator';
import { actorOf, Caller } from '../../../shared/caller';
import { Clock, CLOCK } from '../../../shared/clock';
import { PromotePromptChannelCommand } from './promote-channel.command';
import { PromoteChannelDto } from './promote-channel.dto';

@Controller()
export class PromoteChannelController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Points a channel at a version: callers reading the channel get it from this answer on. */
  @Operation('prompts.promote', 'prompts:write')
  promote(@Body() body: PromoteChannelDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    const now = this.clock.now();
    const { id: promptId, channel, version } = body;
    const promote = { type: 'PromotePromptChannel' as const, organization: caller.organization, promptId, channel, version, actor: caller.name, actorId: actorOf(caller), now };
    return this.commandBus.execute(new PromotePromptChannelCommand(promote, { caller, correlationId, now }));
  }
}
