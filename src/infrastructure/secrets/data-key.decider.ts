import type { Decider } from '#shared/decider';
import { Conflict, NotFound } from '#shared/errors';
import type { DomainEvent } from '../event-store/stream-command';

/**
 * Stored in `orgkey-{org}`: an organization's data key, only ever wrapped (encrypted) by a
 * master key, and the master key's public id. Re-wrapping changes the wrapping, never the data
 * key, so the values sealed under it stay as they are.
 */
export type DataKeyCreated = DomainEvent<'DataKeyCreated', { organization: string; keyId: string; wrappedKey: string; masterKeyId: string; createdAt: string }>;

export type DataKeyRewrapped = DomainEvent<
  'DataKeyRewrapped',
  { organization: string; keyId: string; wrappedKey: string; masterKeyId: string; previousMasterKeyId: string; rewrappedAt: string }
>;

export type DataKeyEvent = DataKeyCreated | DataKeyRewrapped;

export const DATA_KEY_CREATED = 'DataKeyCreated';

export function dataKeyStream(organization: string): string {
  return `orgkey-${organization}`;
}

export type DataKeyState = { status: 'absent' } | { status: 'present'; organization: string; keyId: string; wrappedKey: string; masterKeyId: string };

export type DataKeyCommand =
  | { type: 'CreateDataKey'; organization: string; keyId: string; wrappedKey: string; masterKeyId: string; now: Date }
  | { type: 'RewrapDataKey'; organization: string; keyId: string; wrappedKey: string; masterKeyId: string; fromMasterKeyId: string; now: Date };

export const dataKeyDecider: Decider<DataKeyCommand, DataKeyState, DataKeyEvent> = {
  initialState: { status: 'absent' },

  evolve(state, event) {
    const { organization, keyId, wrappedKey, masterKeyId } = event.data;
    return { status: 'present', organization, keyId, wrappedKey, masterKeyId };
  },

  decide(command, state) {
    const { organization, keyId, wrappedKey, masterKeyId } = command;
    if (command.type === 'CreateDataKey') {
      // Another request (or process) created it first: that key is the organization's.
      if (state.status === 'present') return [];
      return [{ type: 'DataKeyCreated', data: { organization, keyId, wrappedKey, masterKeyId, createdAt: command.now.toISOString() } }];
    }
    if (state.status === 'absent') throw new NotFound(`Organization "${organization}" has no data key.`);
    if (state.masterKeyId === masterKeyId) return [];
    if (state.masterKeyId !== command.fromMasterKeyId || state.keyId !== keyId) {
      throw new Conflict(`The data key of "${organization}" is wrapped by ${state.masterKeyId}, not by ${command.fromMasterKeyId}.`);
    }
    const previousMasterKeyId = state.masterKeyId;
    return [{ type: 'DataKeyRewrapped', data: { organization, keyId, wrappedKey, masterKeyId, previousMasterKeyId, rewrappedAt: command.now.toISOString() } }];
  },
};
