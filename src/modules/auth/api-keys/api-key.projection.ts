import type { Permission } from '#shared/permissions';
import { typedDocumentProjection } from '../../typed-projection';
import { API_KEY_EVENT_TYPES, ApiKeyEvent } from './api-key.events';

export const API_KEYS = 'api_keys';

export type ApiKeyDocument = {
  _id: string;
  organization: string;
  name: string;
  permissions: Permission[];
  keyHash: string;
  createdAt: string;
  revokedAt: string | null;
};

export const apiKeyProjection = typedDocumentProjection<ApiKeyEvent, ApiKeyDocument>({
  name: 'api-keys',
  collection: API_KEYS,
  indexes: [{ keys: { keyHash: 1 }, unique: true }, { keys: { organization: 1, createdAt: -1 } }],
  eventTypes: API_KEY_EVENT_TYPES,
  documentId: (event) => event.data.keyId,
  evolve(document, event) {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const { keyId, organization, name, permissions, keyHash, issuedAt } = event.data;
        return { _id: keyId, organization, name, permissions, keyHash, createdAt: issuedAt, revokedAt: null };
      }
      case 'ApiKeyRevoked':
        return document && { ...document, revokedAt: event.data.revokedAt };
    }
  },
});
