import { AuditedEvent, categoryOf, OrganizationReadOptions, RecordedEvent } from './event-store.port';
import type { ChainLink } from '#shared/event-chain';

/**
 * The audit filters as a predicate, for adapters that cannot answer them with an index
 * (EventStoreDB cannot index metadata): the same rules the SQLite adapter's query applies.
 */
export function matchesOrganizationRead(event: RecordedEvent, options: OrganizationReadOptions): boolean {
  if (event.metadata.organization !== options.organization) return false;
  if (options.after !== undefined && event.position <= options.after) return false;
  if (options.stream !== undefined && event.streamName !== options.stream) return false;
  if (options.categories !== undefined && options.categories.length > 0 && !options.categories.includes(categoryOf(event.streamName))) return false;
  if (options.type !== undefined && event.type !== options.type) return false;
  if (options.actor !== undefined && event.metadata.actor !== options.actor) return false;
  if (options.from !== undefined && event.createdAt < options.from) return false;
  return options.to === undefined || event.createdAt <= options.to;
}

/** The metadata member an adapter that keeps the chain in the event's metadata stores it under. */
export const CHAIN_METADATA_KEY = 'assayChain';

/** Splits the chain link out of stored metadata, so the metadata reads as it was appended. */
export function withChainFromMetadata(event: RecordedEvent): AuditedEvent {
  const { [CHAIN_METADATA_KEY]: chain, ...metadata } = event.metadata;
  return { ...event, metadata: metadata, chain: isChainLink(chain) ? chain : null };
}

function isChainLink(value: unknown): value is ChainLink {
  return typeof value === 'object' && value !== null && typeof (value as ChainLink).hash === 'string';
}
