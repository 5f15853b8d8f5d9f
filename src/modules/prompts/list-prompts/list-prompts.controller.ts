import { Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import type { PromptSummary } from './list-prompts.handler';
import { ListPrompts } from './list-prompts.query';

@Controller()
export class ListPromptsController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The organization's prompts, most recently updated first, without content. */
  @Operation('prompts.list', 'prompts:read')
  list(@CurrentCaller() caller: Caller): Promise<{ data: PromptSummary[] }> {
    return this.queryBus.execute(new ListPrompts(caller.organization));
  }
}
