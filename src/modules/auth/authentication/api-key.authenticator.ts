import type { ReadStore } from '../../../infrastructure/read-store/read-store.port';
import type { Caller } from '../../../shared/caller';
import { Unauthorized } from '../../../shared/errors';
import { hashApiKey } from '../api-keys/api-key-issuer';
import { API_KEYS, ApiKeyDocument } from '../api-keys/api-key.projection';

/** Resolves an API key through the read model, which holds only hashes. */
export class ApiKeyAuthenticator {
  constructor(private readonly readStore: ReadStore) {}

  async authenticate(key: string): Promise<Caller> {
    const document = await this.readStore.collection<ApiKeyDocument>(API_KEYS).findOne({ keyHash: hashApiKey(key) });
    if (!document) throw new Unauthorized('The API key is not valid. Check the Authorization header: Bearer <API_KEY>.');
    if (document.revokedAt !== null) throw new Unauthorized('The API key was revoked. Ask an administrator for a new key.');
    return {
      organization: document.organization,
      kind: 'api_key',
      id: document._id,
      name: document.name,
      permissions: document.permissions,
    };
  }
}
