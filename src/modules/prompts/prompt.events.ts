import type { DomainEvent } from '#infrastructure/event-store/stream-command';

/**
 * Stored in `prompt-{org}.{promptId}`. Each event carries its own time (taken from the command,
 * never from the store's clock), so the promotion history can be replayed to any instant.
 */
export type PromptVersionAppended = DomainEvent<
  'PromptVersionAppended',
  {
    organization: string;
    promptId: string;
    /** 1, 2, 3…: one more than the highest before it, never rewritten. */
    version: number;
    content: string;
    /** The prompt's name from this version on: the newest given name wins. */
    name: string;
    /** The caller's name (API key name or OAuth subject). */
    author: string;
    /** The caller's id, as in the event's metadata (key id or `oauth:<subject>`). */
    authorId: string;
    message?: string;
    createdAt: string;
  }
>;

export type PromptChannelPromoted = DomainEvent<
  'PromptChannelPromoted',
  {
    organization: string;
    promptId: string;
    channel: string;
    /** The version the channel pointed at before, or null for its first promotion. */
    fromVersion: number | null;
    toVersion: number;
    actor: string;
    actorId: string;
    promotedAt: string;
    /** The batch that vouched for the version (prompts.promote {evidence}); absent when none was given. */
    evidence?: { batchId: string; scored: number; passed: number; passRate: number | null };
  }
>;

export type PromptEvent = PromptVersionAppended | PromptChannelPromoted;

export const PROMPT_EVENT_TYPES = ['PromptVersionAppended', 'PromptChannelPromoted'] as const;

/** Prompt ids may hold `/`; neither they nor organization ids hold `.`, so the name is unambiguous. */
export function promptStream(organization: string, promptId: string): string {
  return `prompt-${organization}.${promptId}`;
}

/** `latest` is derived from the highest version: it is never stored and never promoted. */
export const LATEST = 'latest';
export const PRODUCTION = 'production';

/** The version a channel points at. Own properties only: `constructor` is a valid channel name. */
export function pointerOf(channels: Record<string, number>, channel: string): number | null {
  return Object.prototype.hasOwnProperty.call(channels, channel) ? channels[channel] : null;
}
