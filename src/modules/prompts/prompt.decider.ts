import type { Decider } from '#shared/decider';
import { Conflict } from '#shared/errors';
import { promptNotFound, versionNotFound } from './prompt.errors';
import type { PromotionEvidence } from './promotion-evidence';
import { LATEST, pointerOf, PRODUCTION, PromptChannelPromoted, PromptEvent } from './prompt.events';

/** Who did it and when: from the request, so the decider stays deterministic. */
interface Attribution {
  organization: string;
  promptId: string;
  /** The caller's name: API key name or OAuth subject. */
  actor: string;
  /** The caller's id as recorded in event metadata. */
  actorId: string;
  now: Date;
}

export interface AppendPromptVersion extends Attribution {
  type: 'AppendPromptVersion';
  content: string;
  name?: string;
  message?: string;
  /** Also point `production` at the new version, in the same append. */
  publish: boolean;
}

export interface PromotePromptChannel extends Attribution {
  type: 'PromotePromptChannel';
  channel: string;
  version: number;
  /** The batch that vouched for the version, already checked against the channel's policy. */
  evidence?: PromotionEvidence;
}

export type PromptCommand = AppendPromptVersion | PromotePromptChannel;

export interface PromptState {
  /** The highest version; 0 while the prompt does not exist. */
  latestVersion: number;
  name: string | null;
  channels: Record<string, number>;
  /** The time of the stream's last event: recorded times never go backwards. */
  lastAt: string | null;
}

export const promptDecider: Decider<PromptCommand, PromptState, PromptEvent> = {
  initialState: { latestVersion: 0, name: null, channels: {}, lastAt: null },

  evolve(state, event) {
    switch (event.type) {
      case 'PromptVersionAppended':
        return { ...state, latestVersion: event.data.version, name: event.data.name, lastAt: event.data.createdAt };
      case 'PromptChannelPromoted':
        return { ...state, channels: { ...state.channels, [event.data.channel]: event.data.toVersion }, lastAt: event.data.promotedAt };
    }
  },

  decide(command, state) {
    return command.type === 'AppendPromptVersion' ? appendVersion(command, state) : promote(command, state);
  },
};

function appendVersion(command: AppendPromptVersion, state: PromptState): PromptEvent[] {
  const { organization, promptId, content, actor, actorId } = command;
  const version = state.latestVersion + 1;
  const at = notBefore(command.now, state.lastAt);
  const message = command.message === undefined ? {} : { message: command.message };
  const name = command.name ?? state.name ?? promptId;
  const appended: PromptEvent = {
    type: 'PromptVersionAppended',
    data: { organization, promptId, version, content, name, author: actor, authorId: actorId, ...message, createdAt: at },
  };
  return command.publish ? [appended, promoted(command, state, PRODUCTION, version, at)] : [appended];
}

function promote(command: PromotePromptChannel, state: PromptState): PromptEvent[] {
  const { promptId, channel, version } = command;
  if (state.latestVersion === 0) throw promptNotFound(promptId);
  if (version > state.latestVersion) throw versionNotFound(promptId, version, state.latestVersion);
  if (channel === LATEST) {
    throw new Conflict(
      `The channel "latest" is derived: it always points at the highest version (now ${state.latestVersion}) and cannot be promoted. ` +
        'Append a version to move it, or promote another channel.',
    );
  }
  if (pointerOf(state.channels, channel) === version) return [];
  const event = promoted(command, state, channel, version, notBefore(command.now, state.lastAt));
  return [command.evidence ? { ...event, data: { ...event.data, evidence: command.evidence } } : event];
}

function promoted(command: Attribution, state: PromptState, channel: string, toVersion: number, at: string): PromptChannelPromoted {
  const { organization, promptId, actor, actorId } = command;
  const fromVersion = pointerOf(state.channels, channel);
  return { type: 'PromptChannelPromoted', data: { organization, promptId, channel, fromVersion, toVersion, actor, actorId, promotedAt: at } };
}

/**
 * The command's time, or the stream's last time when a clock (or another instance's clock)
 * is behind it: `at` reads the history as a prefix of the stream, so its times must not go back.
 */
function notBefore(now: Date, lastAt: string | null): string {
  const at = now.toISOString();
  return lastAt !== null && lastAt > at ? lastAt : at;
}
