import type { Decider } from '#shared/decider';
import { Conflict, NotFound } from '#shared/errors';
import type { Permission } from '#shared/permissions';
import type { ApiKeyEvent } from './api-key.events';

export interface IssueApiKey {
  type: 'IssueApiKey';
  keyId: string;
  organization: string;
  name: string;
  permissions: Permission[];
  keyHash: string;
  now: Date;
}

export interface RevokeApiKey {
  type: 'RevokeApiKey';
  keyId: string;
  organization: string;
  now: Date;
}

export type ApiKeyCommand = IssueApiKey | RevokeApiKey;

export type ApiKeyState = { status: 'absent' } | { status: 'active' | 'revoked'; organization: string; keyHash: string };

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKeyState, ApiKeyEvent> = {
  initialState: { status: 'absent' },

  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyIssued':
        return { status: 'active', organization: event.data.organization, keyHash: event.data.keyHash };
      case 'ApiKeyRevoked':
        return state.status === 'absent' ? state : { ...state, status: 'revoked' };
    }
  },

  decide(command, state) {
    if (command.type === 'IssueApiKey') {
      if (state.status === 'absent') {
        const { keyId, organization, name, permissions, keyHash } = command;
        return [{ type: 'ApiKeyIssued', data: { keyId, organization, name, permissions, keyHash, issuedAt: command.now.toISOString() } }];
      }
      // Issuing the same key again (a restart with the same bootstrap key) is already done.
      if (state.keyHash === command.keyHash && state.organization === command.organization) return [];
      throw new Conflict(`API key ${command.keyId} already exists.`);
    }
    if (state.status === 'absent' || state.organization !== command.organization) {
      throw new NotFound(`API key "${command.keyId}" does not exist.`);
    }
    if (state.status === 'revoked') return [];
    return [{ type: 'ApiKeyRevoked', data: { keyId: command.keyId, organization: command.organization, revokedAt: command.now.toISOString() } }];
  },
};
