import { Body, Controller } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '../../../infrastructure/http/operation.decorator';
import type { Caller } from '../../../shared/caller';
import { CreatePromptVersion } from './create-version.command';
import { CreateVersionDto } from './create-version.dto';
import type { CreatedPromptVersion } from './create-version.handler';

@Controller()
export class CreateVersionController {
  constructor(private readonly commandBus: CommandBus) {}

  /** Appends a version (creating the prompt with its first); `publish` also moves `production` to it. */
  @Operation('prompts.versions.create', 'prompts:write')
  create(@Body() body: CreateVersionDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<CreatedPromptVersion> {
    const command = new CreatePromptVersion(body.id, body.content, body.name ?? undefined, body.message ?? undefined, body.publish === true, {
      caller,
      correlationId,
      now: new Date(),
    });
    return this.commandBus.execute(command);
  }
}
