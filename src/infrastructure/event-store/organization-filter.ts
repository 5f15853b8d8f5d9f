import { categoryOf, isLiveness, OrganizationReadOptions, RecordedEvent } from './event-store.port';

/**
 * The audit filters as a predicate, for adapters that cannot answer them with an index
 * (EventStoreDB cannot index metadata): the same rules the SQLite adapter's query applies.
 */
export function matchesOrganizationRead(event: RecordedEvent, options: OrganizationReadOptions): boolean {
  if (event.metadata.organization !== options.organization || isLiveness(event.metadata)) return false;
  if (options.after !== undefined && event.position <= options.after) return false;
  if (options.stream !== undefined && event.streamName !== options.stream) return false;
  if (options.categories !== undefined && options.categories.length > 0 && !options.categories.includes(categoryOf(event.streamName))) return false;
  if (options.type !== undefined && event.type !== options.type) return false;
  if (options.actor !== undefined && event.metadata.actor !== options.actor) return false;
  if (options.from !== undefined && event.createdAt < options.from) return false;
  return options.to === undefined || event.createdAt <= options.to;
}
