import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { Permission } from '#shared/permissions';

/** Stored in `apikey-{id}`. The key itself is never stored: only its SHA-256 hash. */
export type ApiKeyIssued = DomainEvent<
  'ApiKeyIssued',
  {
    keyId: string;
    organization: string;
    name: string;
    permissions: Permission[];
    keyHash: string;
    issuedAt: string;
  }
>;

export type ApiKeyRevoked = DomainEvent<'ApiKeyRevoked', { keyId: string; organization: string; revokedAt: string }>;

export type ApiKeyEvent = ApiKeyIssued | ApiKeyRevoked;

export const API_KEY_EVENT_TYPES = ['ApiKeyIssued', 'ApiKeyRevoked'] as const;

export function apiKeyStream(keyId: string): string {
  return `apikey-${keyId}`;
}
