import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { channelMap, historyOf, pointersAfter, PromptPointers, requirePrompt, requireVersion } from '../prompt-reads';
import type { PromptDocument } from '../prompt.projections';
import { GetPrompt } from './get-prompt.query';
import { PromptSelector, resolveVersion } from './prompt-selector';

export interface PromptAnswer {
  id: string;
  name: string;
  version: number;
  content: string;
  channel: string | null;
  channels: Record<string, number>;
  createdAt: string;
  author: string;
}

@QueryHandler(GetPrompt)
export class GetPromptHandler implements IQueryHandler<GetPrompt, PromptAnswer> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, promptId, selector }: GetPrompt): Promise<PromptAnswer> {
    const prompt = await requirePrompt(this.readStore, organization, promptId);
    const pointers = await this.pointers(prompt, selector);
    const { version, channel } = resolveVersion(promptId, selector, pointers, prompt.createdAt);
    const found = await requireVersion(this.readStore, prompt, version);
    return {
      id: promptId,
      name: prompt.name,
      version,
      content: found.content,
      channel,
      channels: channelMap(pointers),
      createdAt: found.createdAt,
      author: found.author,
    };
  }

  /** Now, or as the history left them at `at`: every entry recorded at or before it. */
  private async pointers(prompt: PromptDocument, selector: PromptSelector): Promise<PromptPointers> {
    if (selector.kind === 'version' || selector.at === null) return prompt;
    return pointersAfter(await historyOf(this.readStore, prompt, { at: { $lte: selector.at } }));
  }
}
