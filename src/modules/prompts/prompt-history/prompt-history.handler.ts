import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import type { Filter } from '#infrastructure/read-store/read-store.port';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { historyOf, recorded, requirePrompt } from '../prompt-reads';
import { LATEST } from '../prompt.events';
import type { PromptHistoryDocument } from '../prompt.projections';
import { GetPromptHistory } from './prompt-history.query';

interface Attributed {
  at: string;
  /** The caller's name: API key name or OAuth subject. */
  actor: string;
  /** The caller's id: API key id or `oauth:<subject>`. */
  actorId: string;
}

export type PromptHistoryEntry =
  | (Attributed & { kind: 'appended'; version: number; message: string | null })
  | (Attributed & { kind: 'promoted'; channel: string; fromVersion: number | null; toVersion: number; evidence: PromptHistoryDocument['evidence'] | null });

@QueryHandler(GetPromptHistory)
export class GetPromptHistoryHandler implements IQueryHandler<GetPromptHistory, { data: PromptHistoryEntry[] }> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, promptId, channel }: GetPromptHistory): Promise<{ data: PromptHistoryEntry[] }> {
    const prompt = await requirePrompt(this.readStore, organization, promptId);
    const entries = await historyOf(this.readStore, prompt, channelFilter(channel));
    return { data: entries.map(toEntry) };
  }
}

function channelFilter(channel: string | null): Filter {
  if (channel === null) return {};
  return channel === LATEST ? { kind: 'appended' } : { kind: 'promoted', channel };
}

function toEntry(entry: PromptHistoryDocument): PromptHistoryEntry {
  const { at, actor, actorId } = entry;
  if (entry.kind === 'appended') return { kind: 'appended', at, actor, actorId, version: recorded(entry, 'version', entry.version), message: entry.message };
  return {
    kind: 'promoted',
    at,
    actor,
    actorId,
    channel: recorded(entry, 'channel', entry.channel),
    fromVersion: entry.fromVersion,
    toVersion: recorded(entry, 'toVersion', entry.toVersion),
    evidence: entry.evidence ?? null,
  };
}
