import type { EventMetadata } from './domain-event';
import type { Permission } from './permissions';

/** Who is calling: resolved from the bearer credential by the auth guard. */
export interface Caller {
  organization: string;
  kind: 'api_key' | 'oauth';
  /** The API key id, or the OAuth subject. */
  id: string;
  /** The key's name or the OAuth subject: the author recorded on what the caller writes. */
  name: string;
  permissions: Permission[];
}

/** What a command carries besides its input: who, when, and which request. */
export interface CommandContext {
  caller: Caller;
  correlationId: string;
  now: Date;
}

export function actorOf(caller: Caller): string {
  return caller.kind === 'api_key' ? caller.id : `oauth:${caller.id}`;
}

/** The audit metadata of an event caused directly by a request. */
export function requestMetadata(context: CommandContext): EventMetadata {
  return {
    organization: context.caller.organization,
    actor: actorOf(context.caller),
    correlationId: context.correlationId,
    causationId: context.correlationId,
  };
}
