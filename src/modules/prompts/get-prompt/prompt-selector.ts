import { BadRequest, NotFound } from '#shared/errors';
import { versionNotFound } from '../prompt.errors';
import { LATEST, pointerOf, PRODUCTION } from '../prompt.events';
import type { PromptPointers } from '../prompt-reads';

/** Which version a read asks for: one pinned version, or a channel (now or at an instant). */
export type PromptSelector =
  | { kind: 'version'; version: number }
  /** `channel` null: `production` when it was promoted, else `latest`. `at`: ISO-8601 UTC. */
  | { kind: 'channel'; channel: string | null; at: string | null };

export interface SelectorInput {
  version?: number | null;
  channel?: string | null;
  at?: string | null;
}

export function selectorOf({ version, channel, at }: SelectorInput): PromptSelector {
  if (version != null && channel != null) {
    throw new BadRequest('Give "version" or "channel", not both: "version" pins one version, "channel" reads the version a channel points at.');
  }
  if (version != null && at != null) {
    throw new BadRequest(
      '"at" reads a channel as it was at an instant, and a version is the same at every instant: ' + 'remove "at", or give "channel" instead of "version".',
    );
  }
  if (version != null) return { kind: 'version', version };
  return { kind: 'channel', channel: channel ?? null, at: at == null ? null : instant(at) };
}

/** ISO-8601 UTC with milliseconds, the form the history's times are stored in and compared as. */
function instant(at: string): string {
  const time = new Date(at).getTime();
  if (Number.isNaN(time)) {
    throw new BadRequest(`"at" (${JSON.stringify(at)}) is not a date and time this service can read; send it like 2025-01-31T12:00:00.000Z.`);
  }
  return new Date(time).toISOString();
}

export interface ResolvedVersion {
  version: number;
  /** The channel read (`production` or `latest` by default); null for a pinned version. */
  channel: string | null;
}

/** The version the selector names, given what the channels pointed at (now, or at `at`). */
export function resolveVersion(promptId: string, selector: PromptSelector, pointers: PromptPointers, createdAt: string): ResolvedVersion {
  if (selector.kind === 'version') {
    if (selector.version > pointers.latestVersion) throw versionNotFound(promptId, selector.version, pointers.latestVersion);
    return { version: selector.version, channel: null };
  }
  const { at } = selector;
  if (pointers.latestVersion === 0) {
    throw new NotFound(`Prompt "${promptId}" did not exist at ${at}: its first version was appended at ${createdAt}.`);
  }
  const channel = selector.channel ?? (pointerOf(pointers.channels, PRODUCTION) === null ? LATEST : PRODUCTION);
  if (channel === LATEST) return { version: pointers.latestVersion, channel };
  const version = pointerOf(pointers.channels, channel);
  if (version !== null) return { version, channel };
  throw new NotFound(
    at === null
      ? `Channel "${channel}" of "${promptId}" points at no version: it has never been promoted.`
      : `Channel "${channel}" of "${promptId}" pointed at no version at ${at}: it had not been promoted yet.`,
  );
}
