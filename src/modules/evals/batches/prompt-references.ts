import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { BadRequest } from '#shared/errors';
import { promptStream, PromptVersionAppended } from '#modules/prompts/prompt.events';

/** A prompt version a batch's suite prompt named: what `prompts.promote {evidence}` checks the batch ran. */
export interface PromptReference {
  promptId: string;
  version: number;
}

/** `{{prompt:ID@VERSION}}`: a pinned version of one of the organization's prompts. */
const REFERENCE = /\{\{\s*prompt:([a-z0-9][a-z0-9/_-]*)@([0-9]+)\s*\}\}/g;
const MAX_REFERENCES = 20;

/**
 * Replaces each `{{prompt:ID@VERSION}}` of the suite prompt with that version's text, at start,
 * from the prompt's own stream (the log, so a version appended just before is found). The
 * references go into BatchStarted; a missing prompt or version refuses the start.
 */
export async function resolvePromptReferences(
  eventStore: EventStore,
  organization: string,
  prompt: string,
): Promise<{ prompt: string; references: PromptReference[] }> {
  const matches = [...prompt.matchAll(REFERENCE)];
  if (matches.length === 0) return { prompt, references: [] };
  if (matches.length > MAX_REFERENCES)
    throw new BadRequest(`The suite prompt references ${matches.length} prompt versions; at most ${MAX_REFERENCES} are allowed.`);
  const texts = new Map<string, string>();
  const references: PromptReference[] = [];
  for (const [whole, promptId, digits] of matches) {
    if (texts.has(whole)) continue;
    const version = Number(digits);
    texts.set(whole, await versionText(eventStore, organization, promptId, version));
    references.push({ promptId, version });
  }
  return { prompt: prompt.replace(REFERENCE, (whole) => texts.get(whole) ?? whole), references };
}

async function versionText(eventStore: EventStore, organization: string, promptId: string, version: number): Promise<string> {
  const stream = promptStream(organization, promptId);
  const appended = (await eventStore.readStream(stream)).filter((event) => event.type === 'PromptVersionAppended') as unknown as PromptVersionAppended[];
  if (appended.length === 0) throw new BadRequest(`The suite prompt references {{prompt:${promptId}@${version}}}, but prompt "${promptId}" does not exist.`);
  const found = appended.find((event) => event.data.version === version);
  if (!found) {
    throw new BadRequest(
      `The suite prompt references {{prompt:${promptId}@${version}}}, but "${promptId}" has no version ${version}; its highest is ${appended.length}.`,
    );
  }
  return found.data.content;
}
