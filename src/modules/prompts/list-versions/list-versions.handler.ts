import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { channelMap, historyOf, recorded, requirePrompt } from '../prompt-reads';
import { ListPromptVersions } from './list-versions.query';

export interface PromptVersionSummary {
  version: number;
  author: string;
  createdAt: string;
  message: string | null;
  /** The channels pointing at this version now, `latest` included, sorted. */
  channels: string[];
}

@QueryHandler(ListPromptVersions)
export class ListPromptVersionsHandler implements IQueryHandler<ListPromptVersions, { data: PromptVersionSummary[] }> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  /** Read from the history, which holds every version's metadata without its content. */
  async execute({ organization, promptId }: ListPromptVersions): Promise<{ data: PromptVersionSummary[] }> {
    const prompt = await requirePrompt(this.readStore, organization, promptId);
    const appended = await historyOf(this.readStore, prompt, { kind: 'appended' });
    const channels = Object.entries(channelMap(prompt));
    const data = appended.map((entry) => {
      const version = recorded(entry, 'version', entry.version);
      return {
        version,
        author: entry.actor,
        createdAt: entry.at,
        message: entry.message,
        channels: channels.filter(([, pointed]) => pointed === version).map(([channel]) => channel),
      };
    });
    return { data };
  }
}
