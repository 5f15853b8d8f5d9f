import { Recorded, typedDocumentProjection } from '../typed-projection';
import { promptPolicyProjection } from './prompt-policy';
import { PROMPT_EVENT_TYPES, PromptChannelPromoted, PromptEvent, PromptVersionAppended } from './prompt.events';

/**
 * Three read models per prompt: a small summary with the channel pointers, one document per
 * version with its content, and one document per event of the promotion history. Content
 * lives apart so that lists never load it and no document grows with every version.
 */
export const PROMPTS = 'prompts';
export const PROMPT_VERSIONS = 'prompt_versions';
export const PROMPT_HISTORY = 'prompt_history';

export type PromptDocument = {
  _id: string;
  organization: string;
  promptId: string;
  name: string;
  latestVersion: number;
  /** channel → version; `latest` is derived and never stored. */
  channels: Record<string, number>;
  createdAt: string;
  updatedAt: string;
};

export type PromptVersionDocument = {
  _id: string;
  organization: string;
  promptId: string;
  version: number;
  name: string;
  content: string;
  author: string;
  authorId: string;
  message: string | null;
  createdAt: string;
};

/** One entry of the promotion history: a version appended (which moves `latest`) or a channel moved. */
export type PromptHistoryDocument = {
  _id: string;
  organization: string;
  promptId: string;
  /** The event's revision in the prompt's stream: the history's order. */
  revision: number;
  kind: 'appended' | 'promoted';
  at: string;
  actor: string;
  actorId: string;
  /** appended: the new version, with its message. */
  version: number | null;
  message: string | null;
  /** promoted: the channel and its move. */
  channel: string | null;
  fromVersion: number | null;
  toVersion: number | null;
  /** promoted: the batch that vouched for the version, when one was named. Absent in entries projected before evidence existed. */
  evidence?: PromptChannelPromoted['data']['evidence'] | null;
};

export function promptKey(organization: string, promptId: string): string {
  return `${organization}.${promptId}`;
}

function keyOf(event: Recorded<PromptEvent>): string {
  const { organization, promptId } = event.data;
  return promptKey(organization, promptId);
}

export const promptProjection = typedDocumentProjection<PromptEvent, PromptDocument>({
  name: 'prompts',
  collection: PROMPTS,
  indexes: [{ keys: { organization: 1, updatedAt: -1, _position: -1 } }],
  eventTypes: PROMPT_EVENT_TYPES,
  documentId: keyOf,
  evolve(document, event) {
    if (event.type === 'PromptVersionAppended') return appendedToSummary(document, event.data);
    const { channel, toVersion, promotedAt } = event.data;
    return document && { ...document, channels: { ...document.channels, [channel]: toVersion }, updatedAt: promotedAt };
  },
});

function appendedToSummary(document: PromptDocument | null, data: PromptVersionAppended['data']): PromptDocument {
  const { organization, promptId, version, name, createdAt } = data;
  const base = document ?? { _id: promptKey(organization, promptId), organization, promptId, channels: {}, createdAt };
  return { ...base, name, latestVersion: version, updatedAt: createdAt };
}

export const promptVersionProjection = typedDocumentProjection<PromptVersionAppended, PromptVersionDocument>({
  name: 'prompt-versions',
  collection: PROMPT_VERSIONS,
  indexes: [{ keys: { organization: 1, promptId: 1, version: 1 }, unique: true }],
  eventTypes: ['PromptVersionAppended'],
  documentId: (event) => versionKey(keyOf(event), event.data.version),
  evolve(_document, event) {
    const { message, ...data } = event.data;
    const { organization, promptId, version, name, content, author, authorId, createdAt } = data;
    const _id = versionKey(promptKey(organization, promptId), version);
    return { _id, organization, promptId, version, name, content, author, authorId, message: message ?? null, createdAt };
  },
});

export function versionKey(prompt: string, version: number): string {
  return `${prompt}@${version}`;
}

function historyKey(event: Recorded<PromptEvent>): string {
  return `${keyOf(event)}#${event.revision}`;
}

export const promptHistoryProjection = typedDocumentProjection<PromptEvent, PromptHistoryDocument>({
  name: 'prompt-history',
  collection: PROMPT_HISTORY,
  indexes: [{ keys: { organization: 1, promptId: 1, revision: 1 }, unique: true }, { keys: { organization: 1, at: 1 } }],
  eventTypes: PROMPT_EVENT_TYPES,
  documentId: historyKey,
  evolve(_document, event) {
    const { organization, promptId } = event.data;
    const entry = { _id: historyKey(event), organization, promptId, revision: event.revision };
    if (event.type === 'PromptVersionAppended') {
      const { createdAt, author, authorId, version, message } = event.data;
      const move = { channel: null, fromVersion: null, toVersion: null };
      return { ...entry, kind: 'appended', at: createdAt, actor: author, actorId: authorId, version, message: message ?? null, ...move };
    }
    const { promotedAt, actor, actorId, channel, fromVersion, toVersion, evidence } = event.data;
    return {
      ...entry,
      kind: 'promoted',
      at: promotedAt,
      actor,
      actorId,
      version: null,
      message: null,
      channel,
      fromVersion,
      toVersion,
      evidence: evidence ?? null,
    };
  },
});

export const promptProjections = [promptProjection, promptVersionProjection, promptHistoryProjection, promptPolicyProjection] as const;
