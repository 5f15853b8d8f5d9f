import { hkdfSync, randomUUID } from 'node:crypto';
import type { ChainKey } from '#shared/event-chain';
import { sha256Hex } from '#shared/hash';
import type { EventStore } from '../event-store/event-store.port';
import { KEY_BYTES, openBytes, sealBytes, SecretUnreadable } from './aes-gcm';
import { masterKeyId } from './master-key';

/**
 * The key of the organizations' audit chains: derived from the master key (HKDF-SHA256), so it
 * is never stored anywhere, and every instance holding the master key holds it. Each link names
 * the key's public id; a master-key rotation keeps the outgoing chain key, wrapped under the new
 * master key, in each organization's `chainkey-{org}` stream, so links made before stay checkable.
 */
export function deriveChainKey(masterKey: Buffer): ChainKey {
  const key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'assay-audit-chain/v1', KEY_BYTES));
  return { id: `ck_${sha256Hex(Buffer.concat([Buffer.from('assay-chain-key-id\0'), key])).slice(0, 16)}`, key };
}

export const CHAIN_KEY_KEPT = 'AuditChainKeyKept';

/** A chain key kept for an organization after its master key was rotated away, wrapped under a later master key. */
export interface ChainKeyKept {
  organization: string;
  keyId: string;
  wrappedKey: string;
  masterKeyId: string;
  keptAt: string;
}

export function chainKeyStream(organization: string): string {
  return `chainkey-${organization}`;
}

function chainKeyBinding(organization: string, keyId: string): string {
  return JSON.stringify(['assay-chain-key/v1', organization, keyId]);
}

async function keptRecords(eventStore: EventStore, organization: string): Promise<{ records: ChainKeyKept[]; revision: number }> {
  const events = await eventStore.readStream(chainKeyStream(organization));
  const records = events.filter((event) => event.type === CHAIN_KEY_KEPT).map((event) => event.data as ChainKeyKept);
  return { records, revision: events.at(-1)?.revision ?? -1 };
}

/**
 * The chain keys an organization's links name, as far as this master key can open them: the
 * current one, and those kept wrapped under it. A record that does not open under it (another
 * master key, or written by someone without one) gives no key: its links then do not verify.
 */
export async function chainKeysFor(eventStore: EventStore, masterKey: Buffer, organization: string, keyIds: Iterable<string>): Promise<Map<string, ChainKey>> {
  const current = deriveChainKey(masterKey);
  const found = new Map<string, ChainKey>();
  const wanted = new Set(keyIds);
  if (wanted.delete(current.id)) found.set(current.id, current);
  if (wanted.size === 0) return found;
  const ownId = masterKeyId(masterKey);
  for (const record of (await keptRecords(eventStore, organization)).records) {
    if (!wanted.has(record.keyId) || record.masterKeyId !== ownId || record.organization !== organization) continue;
    try {
      found.set(record.keyId, {
        id: record.keyId,
        key: openBytes(masterKey, Buffer.from(record.wrappedKey, 'base64url'), chainKeyBinding(organization, record.keyId)),
      });
    } catch (error) {
      if (!(error instanceof SecretUnreadable)) throw error;
    }
  }
  return found;
}

/**
 * At a master-key rotation, for one organization: the outgoing chain key, and each key kept under
 * the outgoing master key, wrapped again under the new one. Run again after an interruption, it
 * adds only what is missing. Returns how many records it appended.
 */
export async function keepChainKeys(eventStore: EventStore, organization: string, from: Buffer, to: Buffer, now: Date): Promise<number> {
  const fromId = masterKeyId(from);
  const toId = masterKeyId(to);
  const { records, revision } = await keptRecords(eventStore, organization);
  const outgoing = deriveChainKey(from);
  const keys = new Map<string, Buffer>([[outgoing.id, outgoing.key]]);
  for (const record of records) {
    if (record.masterKeyId !== fromId || keys.has(record.keyId)) continue;
    keys.set(record.keyId, openBytes(from, Buffer.from(record.wrappedKey, 'base64url'), chainKeyBinding(organization, record.keyId)));
  }
  const done = new Set(records.filter((record) => record.masterKeyId === toId).map((record) => record.keyId));
  const keptAt = now.toISOString();
  const metadata = { organization, actor: 'system:cli', correlationId: `rotate-${toId}`, causationId: `rotate-${toId}` };
  const events = [...keys]
    .filter(([keyId]) => !done.has(keyId))
    .map(([keyId, key]) => {
      const wrappedKey = sealBytes(to, key, chainKeyBinding(organization, keyId)).toString('base64url');
      const data: ChainKeyKept = { organization, keyId, wrappedKey, masterKeyId: toId, keptAt };
      return { id: randomUUID(), type: CHAIN_KEY_KEPT, data, metadata };
    });
  if (events.length > 0) await eventStore.append(chainKeyStream(organization), events, revision === -1 ? 'no_stream' : revision);
  return events.length;
}
