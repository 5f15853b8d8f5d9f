import { apiKeyDecider, ApiKeyCommand } from './api-key.decider';
import type { ApiKeyEvent } from './api-key.events';
import { Conflict, NotFound } from '#shared/errors';
import { given } from '../../../../test/support/decider-spec';

const now = new Date('2026-01-01T00:00:00.000Z');
const issue = (extra: Partial<Extract<ApiKeyCommand, { type: 'IssueApiKey' }>> = {}): ApiKeyCommand => ({
  type: 'IssueApiKey',
  keyId: 'key_1',
  organization: 'acme',
  name: 'ci',
  permissions: ['evals:read'],
  keyHash: 'hash-1',
  now,
  ...extra,
});
const revoke = (organization = 'acme'): ApiKeyCommand => ({ type: 'RevokeApiKey', keyId: 'key_1', organization, now });
const issued: ApiKeyEvent = {
  type: 'ApiKeyIssued',
  data: { keyId: 'key_1', organization: 'acme', name: 'ci', permissions: ['evals:read'], keyHash: 'hash-1', issuedAt: now.toISOString() },
};
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { keyId: 'key_1', organization: 'acme', revokedAt: now.toISOString() } };

describe('the API key decider', () => {
  it('issues a new key with its hash, never the key', () => {
    given(apiKeyDecider, []).when(issue()).then([issued]);
  });

  it('issuing the same key again (a restart with the bootstrap key) appends nothing', () => {
    given(apiKeyDecider, [issued]).when(issue()).then([]);
  });

  it('refuses another key under an id already taken with Conflict', () => {
    given(apiKeyDecider, [issued])
      .when(issue({ keyHash: 'hash-2' }))
      .thenThrows(Conflict, 'API key key_1 already exists.');
    given(apiKeyDecider, [issued])
      .when(issue({ organization: 'other' }))
      .thenThrows(Conflict, 'API key key_1 already exists.');
  });

  it('revokes an active key, and revoking it again appends nothing', () => {
    given(apiKeyDecider, [issued]).when(revoke()).then([revoked]);
    given(apiKeyDecider, [issued, revoked]).when(revoke()).then([]);
  });

  it('refuses to revoke a key that does not exist, or is of another organization, with NotFound', () => {
    given(apiKeyDecider, []).when(revoke()).thenThrows(NotFound, 'API key "key_1" does not exist.');
    given(apiKeyDecider, [issued]).when(revoke('other')).thenThrows(NotFound, 'API key "key_1" does not exist.');
  });
});
