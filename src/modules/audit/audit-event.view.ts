import type { AuditedEvent } from '#infrastructure/event-store/event-store.port';
import { categoryOf } from '#infrastructure/event-store/event-store.port';
import type { ChainLink } from '#shared/event-chain';

/** One event as the audit shows it: as stored, with who caused it and its link in the chain. */
export interface AuditEventView {
  position: number;
  id: string;
  stream: string;
  category: string;
  revision: number;
  type: string;
  time: string;
  actor: string;
  correlationId: string;
  causationId: string;
  data: unknown;
  /** The metadata as stored (organization, actor, correlation and causation ids): the chain hash covers it. */
  metadata: AuditedEvent['metadata'];
  /** Null for events stored before the organization's chain began. */
  chain: ChainLink | null;
}

export function auditEventView(event: AuditedEvent): AuditEventView {
  const { metadata } = event;
  return {
    position: event.position,
    id: event.id,
    stream: event.streamName,
    category: categoryOf(event.streamName),
    revision: event.revision,
    type: event.type,
    time: event.createdAt,
    actor: metadata.actor,
    correlationId: metadata.correlationId,
    causationId: metadata.causationId,
    data: event.data,
    metadata,
    chain: event.chain,
  };
}
