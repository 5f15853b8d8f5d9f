import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { BadRequest } from '#shared/errors';
import { PromptsSnapshotDto } from './snapshot.dto';
import type { PromptsSnapshot } from './snapshot.handler';
import { GetPromptsSnapshot } from './snapshot.query';

@Controller()
export class PromptsSnapshotController {
  constructor(private readonly queryBus: QueryBus) {}

  /** "What did production serve at 14:05 on the 3rd?", for every prompt at once. */
  @Operation('prompts.snapshot', 'prompts:read')
  snapshot(@Body() body: PromptsSnapshotDto, @CurrentCaller() caller: Caller): Promise<PromptsSnapshot> {
    const time = new Date(body.at).getTime();
    if (Number.isNaN(time)) throw new BadRequest(`"at" (${JSON.stringify(body.at)}) is not a date and time; send it like 2025-01-31T12:00:00.000Z.`);
    return this.queryBus.execute(new GetPromptsSnapshot(caller.organization, new Date(time).toISOString()));
  }
}
