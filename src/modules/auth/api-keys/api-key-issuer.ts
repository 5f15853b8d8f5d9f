import { randomBytes } from 'node:crypto';
import type { EventMetadata, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { sha256Hex } from '#shared/hash';
import { newId } from '#shared/ids';
import type { Permission } from '#shared/permissions';
import { apiKeyDecider } from './api-key.decider';
import { apiKeyStream } from './api-key.events';

export const API_KEY_PREFIX = 'assay_';

/** 256 random bits, URL-safe: the secret shown to its holder once and never stored. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

export interface IssuedApiKey {
  id: string;
  key: string;
  name: string;
  permissions: Permission[];
  createdAt: string;
  /** The log position of the issue, for read-your-writes. */
  position: number | null;
}

export interface IssueApiKeyInput {
  organization: string;
  name: string;
  permissions: Permission[];
  now: Date;
  metadata: EventMetadata;
  /** A key chosen by the operator (headless bootstrap); otherwise a new random one. */
  key?: string;
}

/**
 * Issues a key. A key chosen by the operator gets an id derived from its hash, so issuing it
 * again on every restart appends nothing.
 */
export async function issueApiKey(eventStore: EventStore, input: IssueApiKeyInput): Promise<IssuedApiKey> {
  const key = input.key ?? generateApiKey();
  const keyHash = hashApiKey(key);
  const keyId = input.key ? `key_${sha256Hex(`init:${keyHash}`).slice(0, 28)}` : newId('key', input.now.getTime());
  const { append } = await executeOnStream(
    eventStore,
    apiKeyStream(keyId),
    apiKeyDecider,
    { type: 'IssueApiKey', keyId, organization: input.organization, name: input.name, permissions: input.permissions, keyHash, now: input.now },
    input.metadata,
  );
  return {
    id: keyId,
    key,
    name: input.name,
    permissions: input.permissions,
    createdAt: input.now.toISOString(),
    position: append?.position ?? null,
  };
}
