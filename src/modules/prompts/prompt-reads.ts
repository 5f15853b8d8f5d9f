import type { Filter, ReadStore } from '#infrastructure/read-store/read-store.port';
import { promptNotFound, versionNotFound } from './prompt.errors';
import { LATEST } from './prompt.events';
import {
  PROMPT_HISTORY,
  PROMPT_VERSIONS,
  PROMPTS,
  PromptDocument,
  PromptHistoryDocument,
  promptKey,
  PromptVersionDocument,
  versionKey,
} from './prompt.projections';

/** What a prompt's channels point at, now or at some instant. */
export interface PromptPointers {
  /** 0 while the prompt does not exist (yet). */
  latestVersion: number;
  channels: Record<string, number>;
}

/** The prompt of the caller's organization; another organization's prompt does not exist for it. */
export async function requirePrompt(store: ReadStore, organization: string, promptId: string): Promise<PromptDocument> {
  const prompt = await store.collection<PromptDocument>(PROMPTS).findOne({ _id: promptKey(organization, promptId) });
  if (!prompt) throw promptNotFound(promptId);
  return prompt;
}

export async function requireVersion(store: ReadStore, prompt: PromptDocument, version: number): Promise<PromptVersionDocument> {
  const found = await store.collection<PromptVersionDocument>(PROMPT_VERSIONS).findOne({ _id: versionKey(prompt._id, version) });
  if (!found) throw versionNotFound(prompt.promptId, version, prompt.latestVersion);
  return found;
}

/** The prompt's history, oldest first, narrowed by `filter`. */
export function historyOf(store: ReadStore, prompt: PromptDocument, filter: Filter = {}): Promise<PromptHistoryDocument[]> {
  return store
    .collection<PromptHistoryDocument>(PROMPT_HISTORY)
    .find({ organization: prompt.organization, promptId: prompt.promptId, ...filter }, { sort: { revision: 1 } });
}

/** A field a history entry of its kind always records (`version` of an appended one, `channel` and `toVersion` of a promotion). */
export function recorded<T>(entry: PromptHistoryDocument, field: 'version' | 'channel' | 'toVersion', value: T | null): T {
  if (value === null) throw new Error(`The ${entry.kind} history entry "${entry._id}" records no ${field}.`);
  return value;
}

/** Replays history entries into the pointers they leave: time travel over the promotion history. */
export function pointersAfter(history: PromptHistoryDocument[]): PromptPointers {
  const pointers: PromptPointers = { latestVersion: 0, channels: {} };
  for (const entry of history) {
    if (entry.kind === 'appended') pointers.latestVersion = recorded(entry, 'version', entry.version);
    else pointers.channels = { ...pointers.channels, [recorded(entry, 'channel', entry.channel)]: recorded(entry, 'toVersion', entry.toVersion) };
  }
  return pointers;
}

/** Every channel with its version, `latest` included (derived from the highest version). */
export function channelMap(pointers: PromptPointers): Record<string, number> {
  const entries: Array<[string, number]> = [...Object.entries(pointers.channels), [LATEST, pointers.latestVersion]];
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1)));
}
