import { EventStore, WrongExpectedVersion } from '../../../infrastructure/event-store/event-store.port';
import type { EventMetadata } from '../../../infrastructure/event-store/event-store.port';
import { derivedEventId } from '../../../shared/ids';

export function organizationStream(organization: string): string {
  return `organization-${organization}`;
}

/**
 * Records that an organization exists (OrganizationCreated), once: a second call finds the
 * stream and appends nothing.
 */
export async function ensureOrganization(
  eventStore: EventStore,
  organization: string,
  now: Date,
  metadata: EventMetadata,
): Promise<boolean> {
  const stream = organizationStream(organization);
  try {
    await eventStore.append(
      stream,
      [
        {
          id: derivedEventId(stream, 'created'),
          type: 'OrganizationCreated',
          data: { organization, createdAt: now.toISOString() },
          metadata,
        },
      ],
      'no_stream',
    );
    return true;
  } catch (error) {
    if (error instanceof WrongExpectedVersion) return false;
    throw error;
  }
}
