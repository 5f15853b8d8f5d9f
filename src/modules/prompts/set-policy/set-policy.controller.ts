import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import { actorOf, Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { SetPromptPolicyCommand } from './set-policy.command';
import { SetPromptPolicyDto } from './set-policy.dto';

@Controller()
export class SetPromptPolicyController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Gates promotions to a channel on a batch's evidence (or lifts the gate with `requireEvidence: null`). */
  @Operation('prompts.policies.set', 'prompts:write')
  set(@Body() body: SetPromptPolicyDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<{ ok: true }> {
    const now = this.clock.now();
    const requireEvidence = body.requireEvidence ? { minPassRate: body.requireEvidence.minPassRate, minTrials: body.requireEvidence.minTrials } : null;
    const payload = {
      type: 'SetPromptPolicy' as const,
      organization: caller.organization,
      channel: body.channel,
      requireEvidence,
      actor: caller.name,
      actorId: actorOf(caller),
      now,
    };
    return this.commandBus.execute(new SetPromptPolicyCommand(payload, { caller, correlationId, now }));
  }
}
