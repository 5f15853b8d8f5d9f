import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import { actorOf, Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import type { PromotePromptChannel } from '../prompt.decider';
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
    const promote: PromotePromptChannel = {
      type: 'PromotePromptChannel',
      organization: caller.organization,
      promptId: body.id,
      channel: body.channel,
      version: body.version,
      actor: caller.name,
      actorId: actorOf(caller),
      now,
    };
    const evidence = body.evidence ? { batchId: body.evidence.batchId } : null;
    return this.commandBus.execute(new PromotePromptChannelCommand(promote, { caller, correlationId, now }, evidence));
  }
}
