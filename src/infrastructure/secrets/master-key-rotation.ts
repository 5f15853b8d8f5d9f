import * as fs from 'node:fs';
import type { AssayConfig } from '../../config';
import { foldEvents } from '#shared/decider';
import { EventStore, isLiveness } from '../event-store/event-store.port';
import { executeOnStream, toDomainEvent } from '../event-store/stream-command';
import { openBytes, sealBytes } from './aes-gcm';
import { keepChainKeys } from './chain-key';
import { dataKeyBindingText } from './bindings';
import { DATA_KEY_CREATED, dataKeyDecider, DataKeyEvent, dataKeyStream } from './data-key.decider';
import { adoptLegacyKeyFile, generateMasterKey, masterKeyId, masterKeyPath, parseMasterKey, readMasterKeyFile, writeMasterKeyFile } from './master-key';

export interface RotationReport {
  from: string;
  to: string;
  organizations: number;
  rewrapped: number;
  /** Already wrapped by the new key: a rotation that stopped half-way and was run again. */
  alreadyDone: number;
  /** Chain keys kept for organizations (the outgoing one, and earlier ones wrapped again), so their audit chains stay checkable. */
  chainKeysKept: number;
  /** Where the new key is: the key file (embedded default) or the operator's environment. */
  keySource: 'file' | 'environment';
}

/**
 * `assay keys rotate-master`: every organization's data key is unwrapped with the current
 * master key and wrapped again with the new one (DataKeyRewrapped), and the audit chain key of
 * the current master key is kept, wrapped under the new one (chain-key.ts). Sealed values are not
 * touched. With the key file, the new key is written beside it first (`master.key.next`) and
 * replaces it only once every data key is re-wrapped, so an interrupted rotation can be rerun.
 */
export async function rotateMasterKey(config: AssayConfig, env: Record<string, string | undefined>, eventStore: EventStore): Promise<RotationReport> {
  const given = env.ASSAY_NEW_MASTER_KEY?.trim() ? parseMasterKey(env.ASSAY_NEW_MASTER_KEY, 'ASSAY_NEW_MASTER_KEY') : null;
  if (config.masterKey) {
    if (!given) throw new Error('ASSAY_MASTER_KEY is set: give the new key in ASSAY_NEW_MASTER_KEY (openssl rand -base64 32).');
    return { ...(await rewrapDataKeys(eventStore, config.masterKey, given)), keySource: 'environment' };
  }
  adoptLegacyKeyFile(config.dataDir);
  const file = masterKeyPath(config.dataDir);
  const current = readMasterKeyFile(file);
  if (!current) throw new Error(`There is no master key to rotate: neither ASSAY_MASTER_KEY nor ${file} exists.`);
  const next = pendingKey(`${file}.next`, given);
  const report = await rewrapDataKeys(eventStore, current, next);
  fs.renameSync(`${file}.next`, file);
  return { ...report, keySource: 'file' };
}

/** The new key of a rotation in progress, or a new one written (mode 0600) beside the current key. */
function pendingKey(file: string, given: Buffer | null): Buffer {
  const pending = readMasterKeyFile(file);
  if (pending && given && !pending.equals(given)) {
    throw new Error(`${file} holds another new key from an interrupted rotation: unset ASSAY_NEW_MASTER_KEY to finish that one.`);
  }
  if (pending) return pending;
  const key = given ?? generateMasterKey();
  writeMasterKeyFile(file, key);
  return key;
}

export async function rewrapDataKeys(eventStore: EventStore, from: Buffer, to: Buffer, now = new Date()): Promise<Omit<RotationReport, 'keySource'>> {
  const fromId = masterKeyId(from);
  const toId = masterKeyId(to);
  if (fromId === toId) throw new Error('The new master key is the one already in use.');
  const { organizations, chained } = await organizationsInLog(eventStore);
  let chainKeysKept = 0;
  for (const organization of chained) chainKeysKept += await keepChainKeys(eventStore, organization, from, to, now);
  let rewrapped = 0;
  let alreadyDone = 0;
  for (const organization of organizations) {
    const stream = dataKeyStream(organization);
    const state = foldEvents(dataKeyDecider, (await eventStore.readStream(stream)).map(toDomainEvent) as DataKeyEvent[]);
    if (state.status === 'absent') continue;
    if (state.masterKeyId === toId) {
      alreadyDone += 1;
      continue;
    }
    if (state.masterKeyId !== fromId) throw new Error(`The data key of "${organization}" is wrapped by ${state.masterKeyId}, which is neither key.`);
    const binding = dataKeyBindingText(organization, state.keyId);
    const dataKey = openBytes(from, Buffer.from(state.wrappedKey, 'base64url'), binding);
    const wrappedKey = sealBytes(to, dataKey, binding).toString('base64url');
    const command = { type: 'RewrapDataKey' as const, organization, keyId: state.keyId, wrappedKey, masterKeyId: toId, fromMasterKeyId: fromId, now };
    const metadata = { organization, actor: 'system:cli', correlationId: `rotate-${toId}`, causationId: `rotate-${toId}` };
    await executeOnStream(eventStore, stream, dataKeyDecider, command, metadata);
    rewrapped += 1;
  }
  return { from: fromId, to: toId, organizations: organizations.length, rewrapped, alreadyDone, chainKeysKept };
}

/**
 * Every organization that has a data key, and every one whose events are chained, from the log
 * (an operator's command, not a hot path).
 */
async function organizationsInLog(eventStore: EventStore): Promise<{ organizations: string[]; chained: string[] }> {
  const organizations = new Set<string>();
  const chained = new Set<string>();
  let after: number | undefined;
  for (;;) {
    const page = await eventStore.readAll({ after, maxCount: 1000 });
    if (page.length === 0) break;
    for (const event of page) {
      if (event.type === DATA_KEY_CREATED) organizations.add((event.data as { organization: string }).organization);
      if (typeof event.metadata.organization === 'string' && !isLiveness(event.metadata)) chained.add(event.metadata.organization);
    }
    after = page[page.length - 1].position;
  }
  return { organizations: [...organizations].sort(), chained: [...chained].sort() };
}
