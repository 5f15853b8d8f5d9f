/** A domain event before it is stored: its type string is a stored contract. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

/** Who caused an event and why: the audit trail carried by every stored event. */
export interface EventMetadata {
  organization: string;
  /** API key id, OAuth subject, or `system:<component>` for the service itself. */
  actor: string;
  /** The HTTP request (or CLI invocation) that led to the event. */
  correlationId: string;
  /** The id of the event that caused this one, or the correlation id for a request. */
  causationId: string;
  [extra: string]: unknown;
}
