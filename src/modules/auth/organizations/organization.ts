import { EventStore, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import type { EventMetadata } from '#infrastructure/event-store/event-store.port';
import { derivedEventId } from '#shared/ids';

export function organizationStream(organization: string): string {
  return `organization-${organization}`;
}

/**
 * Records that an organization exists (OrganizationCreated), once: a second call finds the
 * stream and appends nothing.
 */
export async function ensureOrganization(eventStore: EventStore, organization: string, now: Date, metadata: EventMetadata): Promise<boolean> {
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

/** Whether `OrganizationCreated` is on record: the bootstrap, a `--create-org` or a first key made it. */
export async function organizationExists(eventStore: EventStore, organization: string): Promise<boolean> {
  const created = await eventStore.readStream(organizationStream(organization), { maxCount: 1 });
  return created.length > 0;
}
