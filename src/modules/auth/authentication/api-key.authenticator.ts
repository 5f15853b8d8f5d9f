import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import type { Caller } from '#shared/caller';
import { Unauthorized } from '#shared/errors';
import { hashApiKey } from '../api-keys/api-key-issuer';
import { API_KEYS, ApiKeyDocument } from '../api-keys/api-key.projection';

/** Enough for every key of a large deployment; past it the cache starts over rather than grow. */
const MAX_CACHED_KEYS = 10_000;

/**
 * Resolves an API key through the read model, which holds only hashes. Every request does
 * this, so the callers of valid keys are kept in memory for as long as the API key projection
 * has applied no new event: an issue or a revocation empties the cache, and a revoked key is
 * refused as soon as the read model shows it. Unknown keys are never cached.
 */
export class ApiKeyAuthenticator {
  private readonly callers = new Map<string, Caller>();
  /** The projection generation the cached callers were read at. */
  private cachedAt = -1;

  constructor(
    private readonly readStore: ReadStore,
    /** Changes whenever the API key projection applies an event. */
    private readonly keysGeneration: () => number,
  ) {}

  /** The caller of a remembered key comes back synchronously; any other is looked up. */
  authenticate(key: string): Caller | Promise<Caller> {
    const keyHash = hashApiKey(key);
    const generation = this.keysGeneration();
    if (generation !== this.cachedAt) {
      this.callers.clear();
      this.cachedAt = generation;
    }
    return this.callers.get(keyHash) ?? this.lookUp(keyHash, generation);
  }

  private async lookUp(keyHash: string, generation: number): Promise<Caller> {
    const document = await this.readStore.collection<ApiKeyDocument>(API_KEYS).findOne({ keyHash });
    if (!document) throw new Unauthorized('The API key is not valid. Check the Authorization header: Bearer <API_KEY>.');
    if (document.revokedAt !== null) throw new Unauthorized('The API key was revoked. Ask an administrator for a new key.');
    const caller: Caller = Object.freeze({
      organization: document.organization,
      kind: 'api_key',
      id: document._id,
      name: document.name,
      permissions: Object.freeze([...document.permissions]) as Caller['permissions'],
    });
    // A key read while the projection moved on may already be stale: answer with it, do not keep it.
    if (this.keysGeneration() === generation && this.cachedAt === generation) {
      if (this.callers.size >= MAX_CACHED_KEYS) this.callers.clear();
      this.callers.set(keyHash, caller);
    }
    return caller;
  }
}
