import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { POSITION_FIELD } from '#infrastructure/processing/projection';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { pointerOf, PRODUCTION } from '../prompt.events';
import { PROMPTS, PromptDocument } from '../prompt.projections';
import { ListPrompts } from './list-prompts.query';

/** The spec's answer holds up to 100 prompts. */
export const MAX_LISTED_PROMPTS = 100;

export interface PromptSummary {
  id: string;
  name: string;
  latestVersion: number;
  /** Null while `production` has never been promoted. */
  productionVersion: number | null;
  updatedAt: string;
}

@QueryHandler(ListPrompts)
export class ListPromptsHandler implements IQueryHandler<ListPrompts, { data: PromptSummary[] }> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization }: ListPrompts): Promise<{ data: PromptSummary[] }> {
    // Within one millisecond, the log position tells which prompt changed last.
    const prompts = await this.readStore
      .collection<PromptDocument>(PROMPTS)
      .find({ organization }, { sort: { updatedAt: -1, [POSITION_FIELD]: -1 }, limit: MAX_LISTED_PROMPTS });
    const data = prompts.map(({ promptId, name, latestVersion, channels, updatedAt }) => ({
      id: promptId,
      name,
      latestVersion,
      productionVersion: pointerOf(channels, PRODUCTION),
      updatedAt,
    }));
    return { data };
  }
}
