import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { channelMap, pointersAfter } from '../prompt-reads';
import { PROMPT_HISTORY, PromptHistoryDocument } from '../prompt.projections';
import { GetPromptsSnapshot } from './snapshot.query';

export interface PromptSnapshot {
  id: string;
  /** Every channel with the version it served at the instant, `latest` included. */
  channels: Record<string, number>;
}

export interface PromptsSnapshot {
  at: string;
  /** The prompts that existed at the instant, by id. */
  prompts: PromptSnapshot[];
}

/**
 * The whole organization as it was served at one instant: the promotion history of every prompt
 * up to it, replayed as `prompts.get {at}` replays one prompt's.
 */
@QueryHandler(GetPromptsSnapshot)
export class GetPromptsSnapshotHandler implements IQueryHandler<GetPromptsSnapshot, PromptsSnapshot> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, at }: GetPromptsSnapshot): Promise<PromptsSnapshot> {
    const entries = await this.readStore
      .collection<PromptHistoryDocument>(PROMPT_HISTORY)
      .find({ organization, at: { $lte: at } }, { sort: { promptId: 1, revision: 1 } });
    const byPrompt = new Map<string, PromptHistoryDocument[]>();
    for (const entry of entries) byPrompt.set(entry.promptId, [...(byPrompt.get(entry.promptId) ?? []), entry]);
    const prompts = [...byPrompt].map(([id, history]) => ({ id, channels: channelMap(pointersAfter(history)) }));
    return { at, prompts: prompts.sort((a, b) => (a.id < b.id ? -1 : 1)) };
  }
}
