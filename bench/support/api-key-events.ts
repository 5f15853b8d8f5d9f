/**
 * Realistic API key events for the benchmarks, decided by the API key decider itself so that
 * their payloads and stream layout are the ones the service writes.
 */
import { randomUUID } from 'node:crypto';
import type { EventMetadata, NewEvent } from '#infrastructure/event-store/event-store.port';
import { apiKeyDecider, ApiKeyState } from '#modules/auth/api-keys/api-key.decider';
import { apiKeyStream } from '#modules/auth/api-keys/api-key.events';
import { generateApiKey, hashApiKey } from '#modules/auth/api-keys/api-key-issuer';
import { newId } from '#shared/ids';
import { Permission, PERMISSIONS } from '#shared/permissions';

/** A small seeded generator (mulberry32), so that a fixture is the same from run to run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface BenchKey {
  keyId: string;
  stream: string;
  organization: string;
  name: string;
  permissions: Permission[];
  keyHash: string;
}

const KEY_NAMES = ['ci-runner', 'nightly-evals', 'dashboard', 'grader', 'notebook', 'release-gate'];

/** A key of one of `organizations` organizations, with a random non-empty set of permissions. */
export function newBenchKey(random: () => number, organizations: number, issuedAtMs: number): BenchKey {
  const keyId = newId('key', issuedAtMs);
  const permissions = PERMISSIONS.filter(() => random() < 0.4);
  return {
    keyId,
    stream: apiKeyStream(keyId),
    organization: `org_${Math.floor(random() * organizations)}`,
    name: `${KEY_NAMES[Math.floor(random() * KEY_NAMES.length)]}-${Math.floor(random() * 1000)}`,
    permissions: permissions.length > 0 ? permissions : ['evals:read'],
    keyHash: hashApiKey(generateApiKey()),
  };
}

/** The audit metadata of a request made by an admin key of the key's organization. */
function requestMetadata(key: BenchKey, now: Date): EventMetadata {
  const correlationId = newId('req', now.getTime());
  return { organization: key.organization, actor: `key_admin_${key.organization}`, correlationId, causationId: correlationId };
}

function toNewEvent(decided: { type: string; data: unknown }, metadata: EventMetadata): NewEvent {
  return { id: randomUUID(), type: decided.type, data: decided.data, metadata };
}

const ACTIVE = (key: BenchKey): ApiKeyState => ({ status: 'active', organization: key.organization, keyHash: key.keyHash });

export function apiKeyIssued(key: BenchKey, now: Date): NewEvent {
  const [event] = apiKeyDecider.decide(
    { type: 'IssueApiKey', keyId: key.keyId, organization: key.organization, name: key.name, permissions: key.permissions, keyHash: key.keyHash, now },
    apiKeyDecider.initialState,
  );
  return toNewEvent(event, requestMetadata(key, now));
}

export function apiKeyRevoked(key: BenchKey, now: Date): NewEvent {
  const [event] = apiKeyDecider.decide({ type: 'RevokeApiKey', keyId: key.keyId, organization: key.organization, now }, ACTIVE(key));
  return toNewEvent(event, requestMetadata(key, now));
}

/** One event as the log will hold it: its stream and the revision it takes there. */
export interface LogEntry {
  stream: string;
  revision: number;
  event: NewEvent;
  /** When the store would have recorded it (ISO-8601, as the adapter writes `createdAt`). */
  createdAt: string;
}

export interface KeyHistory {
  entries: LogEntry[];
  keys: number;
  revoked: number;
}

/**
 * A log of API key life cycles: `keys` keys issued over simulated weeks, `revocations` of them
 * revoked some time after their issue, interleaved as they would be in production. Every
 * stream is valid for the decider: issued at revision 0, revoked at most once, at revision 1.
 */
export function apiKeyHistory(options: { keys: number; revocations: number; organizations: number; seed: number }): KeyHistory {
  const { keys, revocations, organizations } = options;
  if (revocations > keys) throw new Error('A key can be revoked only once.');
  const random = seededRandom(options.seed);
  const entries: LogEntry[] = [];
  const revocable: BenchKey[] = [];
  let clock = Date.UTC(2025, 0, 1);
  let issued = 0;
  let revoked = 0;
  while (issued < keys || revoked < revocations) {
    clock += 1 + Math.floor(random() * 60_000);
    const now = new Date(clock);
    // Revoke with the odds that spend the remaining revocations over the remaining steps.
    const remainingRevocations = revocations - revoked;
    const revokeNow = revocable.length > 0 && (issued === keys || random() < remainingRevocations / (keys - issued + remainingRevocations));
    if (revokeNow) {
      const index = Math.floor(random() * revocable.length);
      const key = revocable[index];
      revocable[index] = revocable[revocable.length - 1];
      revocable.pop();
      entries.push({ stream: key.stream, revision: 1, event: apiKeyRevoked(key, now), createdAt: now.toISOString() });
      revoked += 1;
    } else {
      const key = newBenchKey(random, organizations, clock);
      entries.push({ stream: key.stream, revision: 0, event: apiKeyIssued(key, now), createdAt: now.toISOString() });
      revocable.push(key);
      issued += 1;
    }
  }
  return { entries, keys: issued, revoked };
}
