import { randomBytes } from 'node:crypto';
import type { AssayConfig } from '../../config';
import { foldEvents } from '#shared/decider';
import type { EventMetadata, EventStore } from '../event-store/event-store.port';
import { executeOnStream, toDomainEvent } from '../event-store/stream-command';
import { KEY_BYTES, openBytes, openStreamed, sealBytes, SecretUnreadable, startSealing, StreamSealing } from './aes-gcm';
import type { ChainKey } from '#shared/event-chain';
import { chainKeysFor } from './chain-key';
import { bindingText, dataKeyBindingText, SecretBinding } from './bindings';
import { dataKeyDecider, DataKeyEvent, DataKeyState, dataKeyStream } from './data-key.decider';
import { configuredMasterKey, masterKeyId } from './master-key';

/** A sealed value: `v1.<data key id>.<nonce ‖ tag ‖ ciphertext in base64url>`. */
const SEALED_PATTERN = /^v1\.(dk_[0-9a-f]{16})\.([A-Za-z0-9_-]+)$/;

/** A sealed file starts with `v1.<data key id>.` in ASCII: 23 bytes. */
const SEALED_FILE_HEADER = /^v1\.(dk_[0-9a-f]{16})\.$/;
const SEALED_FILE_HEADER_BYTES = 23;

interface DataKey {
  keyId: string;
  key: Buffer;
}

/**
 * Envelope encryption: each organization has one data key (AES-256), created on its first
 * secret and stored only wrapped by the master key, in `orgkey-{org}`. Values are sealed with
 * AES-256-GCM under the data key, bound to what they belong to. Unwrapped data keys live in
 * this process's memory only.
 */
export class KeyRing {
  private readonly dataKeys = new Map<string, Promise<DataKey>>();
  readonly masterKeyId: string;

  constructor(
    private readonly eventStore: EventStore,
    private readonly masterKey: Buffer,
  ) {
    this.masterKeyId = masterKeyId(masterKey);
  }

  async seal(binding: SecretBinding, plaintext: string): Promise<string> {
    const dataKey = await this.dataKeyOf(binding.organization, true);
    const sealed = sealBytes(dataKey.key, Buffer.from(plaintext, 'utf8'), bindingText(binding));
    return `v1.${dataKey.keyId}.${sealed.toString('base64url')}`;
  }

  /** Throws SecretUnreadable unless the value was sealed for exactly this binding. */
  async open(binding: SecretBinding, sealed: string): Promise<string> {
    const match = SEALED_PATTERN.exec(sealed);
    if (!match) throw new SecretUnreadable('This is not a sealed value.');
    const dataKey = await this.dataKeyOf(binding.organization, false);
    if (dataKey.keyId !== match[1]) {
      throw new SecretUnreadable(`The value was sealed under data key ${match[1]}, which is not the data key of "${binding.organization}".`);
    }
    return openBytes(dataKey.key, Buffer.from(match[2], 'base64url'), bindingText(binding)).toString('utf8');
  }

  /** Sealing for files, streamed: `v1.<data key id>.` in ASCII, then nonce ‖ ciphertext ‖ tag. */
  async startSealingFile(binding: SecretBinding): Promise<StreamSealing> {
    const dataKey = await this.dataKeyOf(binding.organization, true);
    const sealing = startSealing(dataKey.key, bindingText(binding));
    return { ...sealing, header: Buffer.concat([Buffer.from(`v1.${dataKey.keyId}.`), sealing.header]) };
  }

  /** Opens a file `startSealingFile` sealed for exactly this binding, or throws SecretUnreadable. */
  async openFile(binding: SecretBinding, sealed: Buffer): Promise<Buffer> {
    const match = SEALED_FILE_HEADER.exec(sealed.subarray(0, SEALED_FILE_HEADER_BYTES).toString('latin1'));
    if (!match) throw new SecretUnreadable('This is not a sealed file.');
    const dataKey = await this.dataKeyOf(binding.organization, false);
    if (dataKey.keyId !== match[1])
      throw new SecretUnreadable(`The file was sealed under data key ${match[1]}, which is not the data key of "${binding.organization}".`);
    return openStreamed(dataKey.key, sealed.subarray(SEALED_FILE_HEADER_BYTES), bindingText(binding));
  }

  /** The audit chain keys an organization's links name, as far as this ring's master key holds them (chain-key.ts). */
  chainKeys(organization: string, keyIds: Iterable<string>): Promise<Map<string, ChainKey>> {
    return chainKeysFor(this.eventStore, this.masterKey, organization, keyIds);
  }

  private dataKeyOf(organization: string, create: boolean): Promise<DataKey> {
    const cached = this.dataKeys.get(organization);
    if (cached) return cached;
    const loading = this.load(organization, create);
    this.dataKeys.set(organization, loading);
    // A failure is not remembered: the next call tries again.
    loading.catch(() => this.dataKeys.delete(organization));
    return loading;
  }

  private async load(organization: string, create: boolean): Promise<DataKey> {
    let state = await this.readState(organization);
    if (state.status === 'absent' && create) {
      await this.create(organization);
      state = await this.readState(organization);
    }
    if (state.status === 'absent') throw new SecretUnreadable(`Organization "${organization}" has no data key: it has stored no secret.`);
    if (state.masterKeyId !== this.masterKeyId) {
      throw new SecretUnreadable(
        `The data key of "${organization}" is wrapped by master key ${state.masterKeyId}, but this process holds ${this.masterKeyId}. ` +
          'Configure the master key in use (or finish "assay keys rotate-master").',
      );
    }
    const key = openBytes(this.masterKey, Buffer.from(state.wrappedKey, 'base64url'), dataKeyBindingText(organization, state.keyId));
    return { keyId: state.keyId, key };
  }

  private async readState(organization: string): Promise<DataKeyState> {
    const events = await this.eventStore.readStream(dataKeyStream(organization));
    return foldEvents(dataKeyDecider, events.map(toDomainEvent) as DataKeyEvent[]);
  }

  private async create(organization: string): Promise<void> {
    const keyId = `dk_${randomBytes(8).toString('hex')}`;
    const wrapped = sealBytes(this.masterKey, randomBytes(KEY_BYTES), dataKeyBindingText(organization, keyId));
    const now = new Date();
    const command = { type: 'CreateDataKey' as const, organization, keyId, wrappedKey: wrapped.toString('base64url'), masterKeyId: this.masterKeyId, now };
    await executeOnStream(this.eventStore, dataKeyStream(organization), dataKeyDecider, command, systemMetadata(organization, keyId));
  }
}

function systemMetadata(organization: string, keyId: string): EventMetadata {
  return { organization, actor: 'system:key-ring', correlationId: `datakey-${keyId}`, causationId: `datakey-${keyId}` };
}

/** What a key ring is opened over: the event log that holds the wrapped data keys, and the master key's configuration. */
export interface KeyRingSource {
  eventStore: EventStore;
  config: Pick<AssayConfig, 'masterKey' | 'dataDir'>;
}

/**
 * A key ring over this event store and the configured master key. The server opens one, at its
 * composition root, and InfrastructureModule provides it to every part that seals or opens.
 * Another ring over the same log (a tool's, a test's) reads the same data keys from the log.
 */
export function openKeyRing(source: KeyRingSource): KeyRing {
  return new KeyRing(source.eventStore, configuredMasterKey(source.config));
}
