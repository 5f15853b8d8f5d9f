import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import { actorOf, Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import type { AppendPromptVersion } from '../prompt.decider';
import { CreatedPromptVersion, CreatePromptVersionCommand } from './create-version.command';
import { CreateVersionDto } from './create-version.dto';

@Controller()
export class CreateVersionController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Appends a version (creating the prompt with its first); `publish` also moves `production` to it. */
  @Operation('prompts.versions.create', 'prompts:write')
  create(@Body() body: CreateVersionDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<CreatedPromptVersion> {
    const now = this.clock.now();
    const append: AppendPromptVersion = {
      type: 'AppendPromptVersion',
      organization: caller.organization,
      promptId: body.id,
      content: body.content,
      name: body.name ?? undefined,
      message: body.message ?? undefined,
      publish: body.publish === true,
      actor: caller.name,
      actorId: actorOf(caller),
      now,
    };
    return this.commandBus.execute(new CreatePromptVersionCommand(append, { caller, correlationId, now }));
  }
}
