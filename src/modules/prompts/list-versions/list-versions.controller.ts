import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { ListVersionsDto } from './list-versions.dto';
import type { PromptVersionSummary } from './list-versions.handler';
import { ListPromptVersions } from './list-versions.query';

@Controller()
export class ListVersionsController {
  constructor(private readonly queryBus: QueryBus) {}

  /** Every version of a prompt, oldest first, without content. */
  @Operation('prompts.versions.list', 'prompts:read')
  list(@Body() body: ListVersionsDto, @CurrentCaller() caller: Caller): Promise<{ data: PromptVersionSummary[] }> {
    return this.queryBus.execute(new ListPromptVersions(caller.organization, body.id));
  }
}
