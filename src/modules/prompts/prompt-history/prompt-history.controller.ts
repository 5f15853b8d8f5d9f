import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { PromptHistoryDto } from './prompt-history.dto';
import type { PromptHistoryEntry } from './prompt-history.handler';
import { GetPromptHistory } from './prompt-history.query';

@Controller()
export class PromptHistoryController {
  constructor(private readonly queryBus: QueryBus) {}

  /** The promotion history, oldest first: every append and every channel move, with who and when. */
  @Operation('prompts.history', 'prompts:read')
  history(@Body() body: PromptHistoryDto, @CurrentCaller() caller: Caller): Promise<{ data: PromptHistoryEntry[] }> {
    return this.queryBus.execute(new GetPromptHistory(caller.organization, body.id, body.channel ?? null));
  }
}
