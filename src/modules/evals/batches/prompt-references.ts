import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { foldEvents } from '#shared/decider';
import { BadRequest } from '#shared/errors';
import { promptDecider } from '#modules/prompts/prompt.decider';
import { LATEST, pointerOf, promptStream, PromptEvent, PromptVersionAppended } from '#modules/prompts/prompt.events';
import { CHANNEL_PATTERN, PROMPT_ID_PATTERN } from '#modules/prompts/prompt.fields';

/**
 * A prompt version a batch's suite prompt named: what `prompts.promote {evidence}` checks the batch
 * ran. `channel` is the channel it was named by (`{{prompt:ID@CHANNEL}}`), resolved at start;
 * absent for a pinned version.
 */
export interface PromptReference {
  promptId: string;
  version: number;
  channel?: string;
}

/** Every `{{prompt:…}}` of a suite prompt, well formed or not: each is resolved or refused. */
const ANY_REFERENCE = /\{\{\s*prompt:([^{}]*?)\s*\}\}/g;
const MAX_REFERENCES = 20;
const FIX =
  'write {{prompt:ID@VERSION}} (a version, e.g. {{prompt:greeting@3}}) or {{prompt:ID@CHANNEL}} (e.g. {{prompt:greeting@production}}, resolved when the batch starts)';

/** A reference as written: the prompt and either a version or a channel. */
type Named = { promptId: string; version: number } | { promptId: string; channel: string };

/** `ID@VERSION` or `ID@CHANNEL`; anything else is refused, saying what to write. */
function parseReference(whole: string, inner: string): Named {
  const at = inner.lastIndexOf('@');
  if (at < 0) throw new BadRequest(`The suite prompt holds ${whole}, which names no version or channel: ${FIX}.`);
  const promptId = inner.slice(0, at);
  const selector = inner.slice(at + 1);
  if (!PROMPT_ID_PATTERN.test(promptId) || promptId.length > 255) {
    throw new BadRequest(`The suite prompt holds ${whole}, whose prompt id "${promptId}" is not one (a-z, 0-9, "/", "_", "-"): ${FIX}.`);
  }
  if (/^[0-9]+$/.test(selector)) {
    const version = Number(selector);
    if (version < 1 || !Number.isSafeInteger(version)) throw new BadRequest(`The suite prompt holds ${whole}: versions start at 1; ${FIX}.`);
    return { promptId, version };
  }
  if (!CHANNEL_PATTERN.test(selector) || selector.length > 36) {
    throw new BadRequest(`The suite prompt holds ${whole}, whose "${selector}" is neither a version nor a channel name: ${FIX}.`);
  }
  return { promptId, channel: selector };
}

/**
 * Replaces each `{{prompt:ID@VERSION}}` and `{{prompt:ID@CHANNEL}}` of the suite prompt with that
 * version's text, at start, from the prompt's own stream (the log, so a version appended or a
 * channel promoted just before is found). A channel is resolved to the version it points at then,
 * and recorded as that version: evidence names exactly what ran. The references go into
 * BatchStarted and each run's setup; a missing prompt, version or channel, or any other
 * `{{prompt:…}}`, refuses the start.
 */
export async function resolvePromptReferences(
  eventStore: EventStore,
  organization: string,
  prompt: string,
): Promise<{ prompt: string; references: PromptReference[] }> {
  const matches = [...prompt.matchAll(ANY_REFERENCE)];
  if (matches.length === 0) return { prompt, references: [] };
  if (matches.length > MAX_REFERENCES)
    throw new BadRequest(`The suite prompt references ${matches.length} prompt versions; at most ${MAX_REFERENCES} are allowed.`);
  const named = new Map(matches.map(([whole, inner]) => [whole, parseReference(whole, inner)] as const));
  const texts = new Map<string, string>();
  const references: PromptReference[] = [];
  for (const [whole, reference] of named) {
    const events = await promptEvents(eventStore, organization, reference.promptId, whole);
    const version = 'version' in reference ? reference.version : channelVersion(events, reference.promptId, reference.channel, whole);
    texts.set(whole, versionText(events, reference.promptId, version, whole));
    const resolved: PromptReference =
      'channel' in reference ? { promptId: reference.promptId, version, channel: reference.channel } : { promptId: reference.promptId, version };
    // The same reference written twice (spacing aside) is recorded once.
    if (!references.some((known) => known.promptId === resolved.promptId && known.version === resolved.version && known.channel === resolved.channel)) {
      references.push(resolved);
    }
  }
  return { prompt: prompt.replace(ANY_REFERENCE, (whole) => texts.get(whole) ?? whole), references };
}

async function promptEvents(eventStore: EventStore, organization: string, promptId: string, whole: string): Promise<PromptEvent[]> {
  const events = (await eventStore.readStream(promptStream(organization, promptId))) as unknown as PromptEvent[];
  if (!events.some((event) => event.type === 'PromptVersionAppended')) {
    throw new BadRequest(`The suite prompt references ${whole}, but prompt "${promptId}" does not exist.`);
  }
  return events;
}

/** The version a channel points at now; `latest` is the highest. */
function channelVersion(events: readonly PromptEvent[], promptId: string, channel: string, whole: string): number {
  const state = foldEvents(promptDecider, [...events]);
  if (channel === LATEST) return state.latestVersion;
  const version = pointerOf(state.channels, channel);
  if (version !== null) return version;
  const channels = [...Object.keys(state.channels).sort(), LATEST].join(', ');
  throw new BadRequest(
    `The suite prompt references ${whole}, but "${promptId}" has no channel "${channel}" (its channels: ${channels}): promote one with prompts.promote, or name a version.`,
  );
}

function versionText(events: readonly PromptEvent[], promptId: string, version: number, whole: string): string {
  const appended = events.filter((event): event is PromptVersionAppended => event.type === 'PromptVersionAppended');
  const found = appended.find((event) => event.data.version === version);
  if (!found) throw new BadRequest(`The suite prompt references ${whole}, but "${promptId}" has no version ${version}; its highest is ${appended.length}.`);
  return found.data.content;
}
