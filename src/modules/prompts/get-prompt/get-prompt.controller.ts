import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { GetPromptDto } from './get-prompt.dto';
import type { PromptAnswer } from './get-prompt.handler';
import { GetPrompt } from './get-prompt.query';
import { selectorOf } from './prompt-selector';

@Controller()
export class GetPromptController {
  constructor(private readonly queryBus: QueryBus) {}

  /** A version's content: pinned, or through a channel (default `production`, else `latest`), now or at `at`. */
  @Operation('prompts.get', 'prompts:read')
  get(@Body() body: GetPromptDto, @CurrentCaller() caller: Caller): Promise<PromptAnswer> {
    return this.queryBus.execute(new GetPrompt(caller.organization, body.id, selectorOf(body)));
  }
}
